"""The shared browser fixture must not break asyncio.run() in later test modules: between its
calls Playwright's sync API marks its own loop as running in the main thread."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.browser import chromium_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium here")
def test_asyncio_run_works_in_a_module_after_a_browser_module(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from tests.support.browser import browser, page  # noqa: F401\n"
    )
    (tmp_path / "test_a_browser.py").write_text(
        textwrap.dedent(
            """
            def test_opens_a_page(page):
                page.set_content("<p>hi</p>")
                assert page.inner_text("p") == "hi"
            """
        )
    )
    (tmp_path / "test_b_asyncio.py").write_text(
        textwrap.dedent(
            """
            import asyncio

            def test_runs_a_coroutine():
                async def seven():
                    return 7
                assert asyncio.run(seven()) == 7
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert "2 passed" in done.stdout, done.stdout + done.stderr
