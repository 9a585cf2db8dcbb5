"""The viewer in headless Chromium: play a track, filter the unit table, open a failed call
and see its database diff, use the keyboard, fit a phone screen."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import LiveServer
from voxeval.viewer import create_app


@pytest.fixture(scope="module")
def server(single_run: Path, live_run: Path) -> Iterator[LiveServer]:
    with LiveServer(create_app([single_run, live_run])) as live:
        yield live


def test_play_a_track_to_its_end(page: Any, server: LiveServer) -> None:
    page.goto(f"{server.url}/runs/single-run/units")
    page.get_by_role("link", name="q1__recorded__clean").first.click()
    audio = page.locator("audio#track-1")  # the reply (0.5 s)
    audio.evaluate("a => a.play()")
    page.wait_for_function("document.querySelector('audio#track-1').ended", timeout=10_000)
    assert audio.evaluate("a => a.currentTime") > 0.4
    # the playhead of its figure followed the track
    assert (
        page.locator('svg[data-track="track-1"] .playhead').get_attribute("visibility") == "visible"
    )


def test_filter_the_table_then_open_a_failed_call_and_see_its_diff(
    page: Any, server: LiveServer
) -> None:
    page.goto(f"{server.url}/runs/live-run/units")
    assert page.locator("#units-table tbody tr").count() == 8
    page.get_by_label("Metric").select_option("task_completion")  # submits on change
    page.wait_for_url("**metric=task_completion**")
    page.get_by_label("Outcome").select_option("fail")
    page.wait_for_url("**outcome=fail**")
    rows = page.locator("#units-table tbody tr")
    assert rows.count() == 4
    assert set(rows.locator("td:nth-child(3)").all_inner_texts()) == {"wrong"}
    rows.first.locator("a").click()
    page.wait_for_url("**/units/*")
    diff = page.locator("#db-diff")
    assert "fridaX" in diff.inner_text() and "friday" in diff.inner_text()
    assert page.locator("#score-task_completion").inner_text().split()[1:3] == ["0", "fail"]
    page.locator("#back-to-table").click()  # back to the same filtered view
    page.wait_for_url("**outcome=fail**")


def test_keyboard_moves_through_rows_and_pages(page: Any, server: LiveServer) -> None:
    page.goto(f"{server.url}/runs/live-run/units?per_page=25&sort=system&order=desc")
    page.keyboard.press("j")
    page.keyboard.press("j")
    current = page.locator("tr.kbd-current")
    assert (
        current.count() == 1
        and current.locator("td").first.inner_text()
        == page.locator("#units-table tbody tr:nth-child(2) td").first.inner_text()
    )
    page.keyboard.press("Enter")  # the row's link has the focus
    page.wait_for_url("**/units/*")
    page.keyboard.press("n")  # next unit in plan order
    page.wait_for_url("**/units/*")
    page.keyboard.press("/")  # no filters here: nothing happens, no error


def test_unit_table_fits_a_phone(page: Any, server: LiveServer) -> None:
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{server.url}/runs/live-run/units")
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= 390  # the table scrolls inside its box, the page does not
    assert page.get_by_label("System").is_visible()
