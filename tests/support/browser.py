"""Headless Chromium from Debian's package, driven by Playwright through its executable path
(Playwright's own browser download cannot work here). Tests that need it skip with a message
when either is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

# Waits that last as long as real-time audio playback: generous, because on a loaded 2-core
# machine (two xdist workers) Chromium's media clock can run late; a passing wait returns early.
PLAYBACK_TIMEOUT_MS = 60_000

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def chromium_path() -> str | None:
    """VOXEVAL_CHROMIUM, else the first Chromium found on this machine."""
    configured = os.environ.get("VOXEVAL_CHROMIUM")
    if configured:
        return configured if os.path.exists(configured) else None
    for path in CANDIDATES:
        if os.path.exists(path):
            return path
    return shutil.which("chromium")


# Module scope, not session: between its calls Playwright's sync API leaves its event loop
# marked as running in the main thread, so any later test calling asyncio.run() in the same
# session would fail ("cannot be called from a running event loop").
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module; use ``browser.new_context()`` per test."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (make setup installs it)")
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium here: `apt-get install chromium` (make setup tries it)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        # autoplay: tests press play themselves; the flag only avoids a user-gesture prompt.
        instance = playwright.chromium.launch(
            executable_path=path,
            args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
        )
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context and page (own cookies) per test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="module")
def media_browser(browser: Any) -> Iterator[Any]:
    """A second headless Chromium whose microphone is a fake device (a beeping tone) that
    pages may use without a permission prompt: for recording in the browser. It is launched
    through the session's Playwright (one sync Playwright per thread)."""
    instance = browser.browser_type.launch(
        executable_path=chromium_path(),
        args=[
            "--no-sandbox",
            "--autoplay-policy=no-user-gesture-required",
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",
        ],
    )
    try:
        yield instance
    finally:
        instance.close()
