"""Keyboard and accessibility in headless Chromium: an arena item is completed with the
keyboard alone (type the token, Enter; Tab to the start button; Space plays each clip; a
digit votes; Enter on the reveal's "Next item"), and every form control of every page has an
accessible name as Chromium's accessibility tree computes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from tests.raters.rater_client import invite
from tests.raters.study_builder import make_study
from tests.support.browser import PLAYBACK_TIMEOUT_MS
from tests.support.live_server import LiveServer
from voxeval.raters.app import create_app
from voxeval.raters.schema import responses_table

CONTROL_ROLES = {
    "button", "textbox", "checkbox", "radio", "combobox", "listbox", "slider", "spinbutton",
    "searchbox", "switch", "link",
}  # fmt: skip


def unnamed_controls(page: Any) -> list[str]:
    """Controls without an accessible name, from Chromium's own accessibility tree."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    missing, checked = [], 0
    for node in nodes:
        role = (node.get("role") or {}).get("value")
        if node.get("ignored") or role not in CONTROL_ROLES:
            continue
        checked += 1
        name = str((node.get("name") or {}).get("value") or "").strip()
        if not name:
            missing.append(f"{role} (backend node {node.get('backendDOMNodeId')})")
    assert checked > 0, "no form control in the accessibility tree"
    return missing


def _controls(page: Any) -> int:
    return int(
        page.evaluate(
            "document.querySelectorAll('input:not([type=hidden]), button, textarea, select').length"
        )
    )


def test_arena_item_with_the_keyboard_alone(page: Any, tmp_path: Path) -> None:
    app = create_app(make_study(tmp_path / "study", "arena", items=2, min_time_factor=1.0))
    with LiveServer(app) as server:
        page.goto(f"{server.url}/login")
        assert _controls(page) >= 2 and unnamed_controls(page) == []
        page.keyboard.type(invite(app)[0])  # the token field has focus on arrival
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.url}/training")
        assert unnamed_controls(page) == []
        for _ in range(10):  # Tab to the start button (after the header's log-out button)
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.id") == "start":
                break
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.url}/item/*")
        item_url = page.url
        assert _controls(page) >= 5 and unnamed_controls(page) == []

        clips = page.locator("audio[data-clip]").count()
        assert clips == 3
        for played in range(1, clips + 1):  # Space plays the next clip not yet finished
            page.keyboard.press("Space")
            page.wait_for_function(
                "n => [...document.querySelectorAll('.clip-state')]"
                ".filter(e => e.textContent.includes('✓')).length >= n",
                arg=played,
                timeout=PLAYBACK_TIMEOUT_MS,
            )
        page.wait_for_selector(
            "#vote-b:enabled", timeout=PLAYBACK_TIMEOUT_MS
        )  # min time = audio time
        page.keyboard.press("2")
        page.wait_for_url(f"{item_url}/reveal")
        assert unnamed_controls(page) == []
        assert page.evaluate("document.activeElement.id") == "next"
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.url}/item/*")
        assert page.url != item_url

    with app.state.site.engine.connect() as conn:
        [row] = conn.execute(select(responses_table)).all()
    assert row.answer["choice"] in ("a", "b")  # "2" = the side shown as B
    app.state.site.engine.dispose()


def test_every_control_of_the_other_pages_has_a_name(browser: Any, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    try:
        for task in ("rubric", "score", "record"):
            app = create_app(make_study(tmp_path / task, task, items=1, min_time_factor=0))
            with LiveServer(app) as server:
                page = context.new_page()
                page.goto(f"{server.url}/login?token={invite(app)[0]}")
                page.wait_for_url(f"{server.url}/training")
                page.click("#start")
                page.wait_for_url(f"{server.url}/item/*")
                assert _controls(page) >= 2
                assert unnamed_controls(page) == [], task
                page.close()
                if task == "rubric":  # and the admin dashboard, with its tables
                    admin = context.new_page()
                    admin.goto(f"{server.url}/login?token={invite(app, role='admin')[0]}")
                    admin.wait_for_url(f"{server.url}/admin")
                    assert unnamed_controls(admin) == []
                    admin.close()
            app.state.site.engine.dispose()
    finally:
        context.close()
