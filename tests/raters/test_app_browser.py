"""End to end in headless Chromium: a rater logs in with a token link, cannot vote before
every clip has played, votes with the keyboard, and the vote is in the database; a speaker
records with the (fake) microphone and a WAV at the study's rate lands in recordings/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import soundfile as sf
from sqlalchemy import select

from tests.raters.rater_client import invite
from tests.raters.study_builder import make_study
from tests.support.browser import PLAYBACK_TIMEOUT_MS
from tests.support.live_server import LiveServer
from voxeval.raters.app import create_app
from voxeval.raters.schema import responses_table

PLAY_ALL = "Promise.all([...document.querySelectorAll('audio[data-clip]')].map(a => a.play()))"


def _responses(app: Any) -> list[Any]:
    with app.state.site.engine.connect() as conn:
        return list(conn.execute(select(responses_table)).all())


def _log_in(page: Any, server: LiveServer, token: str) -> None:
    page.goto(f"{server.url}/login?token={token}")
    page.wait_for_url(f"{server.url}/training")
    assert token not in page.url
    page.click("#start")
    page.wait_for_url(f"{server.url}/item/*")


def test_rater_votes_after_playing_every_clip(page: Any, tmp_path: Path) -> None:
    app = create_app(make_study(tmp_path / "study", "arena", items=2, min_time_factor=1.0))
    with LiveServer(app) as server:
        _log_in(page, server, invite(app)[0])
        item_url = page.url
        for button in ("#vote-a", "#vote-b", "#vote-tie", "#vote-both-bad"):
            assert page.locator(button).is_disabled()
        assert "alpha-sys" not in page.content()
        page.keyboard.press("1")  # the shortcut does nothing while the gate is closed
        assert page.url == item_url and _responses(app) == []

        page.evaluate(PLAY_ALL)
        page.wait_for_selector("#vote-a:enabled", timeout=PLAYBACK_TIMEOUT_MS)
        page.fill("#reason", "B rambles")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("1")
        page.wait_for_url(f"{item_url}/reveal")
        assert "alpha-sys" in page.content() and "beta-sys" in page.content()

        [row] = _responses(app)
        assert row.answer["choice"] == "a" and row.answer["reason"] == "B rambles"
        assert row.seconds_on_page >= 0.9  # min time = 1.0 x 0.9 s of audio

        # the item cannot be answered twice, not even by posting again from this browser
        item_page = page.evaluate("fetch('" + item_url + "').then(r => r.text()).then(t => t)")
        assert "Vote saved" in item_page  # the item page now leads to the reveal
        token_field = page.locator("input[name=csrf_token]").first.get_attribute("value")
        again = page.request.post(item_url, form={"csrf_token": token_field, "choice": "b"})
        assert again.status == 409
        without = page.request.post(item_url, form={"choice": "b"})
        assert without.status == 403
        assert len(_responses(app)) == 1

        page.click("#next")
        page.wait_for_url(f"{server.url}/item/*")
        assert page.url != item_url


def test_item_page_fits_a_phone_screen(browser: Any, tmp_path: Path) -> None:
    app = create_app(make_study(tmp_path / "study", "rubric", items=1, min_time_factor=0))
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = context.new_page()
        with LiveServer(app) as server:
            _log_in(page, server, invite(app)[0])
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390
            assert page.locator("legend").first.is_visible()
            assert page.locator("label[for=criterion-1]").is_visible()
    finally:
        context.close()


def test_speaker_records_in_the_browser(media_browser: Any, tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", "record", items=1, min_time_factor=0, sample_rate=22050)
    app = create_app(study)
    context = media_browser.new_context()
    try:
        page = context.new_page()
        with LiveServer(app) as server:
            _log_in(page, server, invite(app)[0])
            assert "Please read sentence number 0." in page.content()
            assert page.locator("#submit-answer").is_disabled()
            page.click("#record-toggle")
            page.wait_for_selector("#record-toggle:has-text('Stop')")
            page.wait_for_timeout(1200)
            page.click("#record-toggle")
            page.wait_for_selector("#take:not([hidden])")
            page.wait_for_selector("#submit-answer:enabled")
            page.click("#submit-answer")
            page.wait_for_selector("text=Thank you!")
    finally:
        context.close()
    [row] = _responses(app)
    assert row.answer["sample_rate"] == 22050
    path = study / row.answer["path"]
    info = sf.info(str(path))
    assert path.parent.parent.name == "recordings"
    assert info.samplerate == 22050 and info.channels == 1
    assert 0.6 < info.duration < 5.0
    assert row.answer["duration_s"] == round(info.duration, 3)


STATUSES = "urls => Promise.all(urls.map(u => fetch(u).then(r => r.status)))"
CLIP_SRCS = "[...document.querySelectorAll('audio[data-clip]')].map(a => a.getAttribute('src'))"


def test_a_rater_cannot_fetch_any_clip_outside_their_current_item(
    browser: Any, tmp_path: Path
) -> None:
    study = make_study(tmp_path / "study", "arena", items=3, gold=1, min_time_factor=0)
    app = create_app(study)
    every_file = [f"/audio/{p.relative_to(study).as_posix()}" for p in study.rglob("*.wav")]
    first, second = browser.new_context(), browser.new_context()
    try:
        with LiveServer(app) as server:
            page, other = first.new_page(), second.new_page()
            _log_in(page, server, invite(app)[0])
            _log_in(other, server, invite(app)[0])
            mine, theirs = page.evaluate(CLIP_SRCS), other.evaluate(CLIP_SRCS)
            assert len(mine) == 3 and not set(mine) & set(theirs)
            assert page.evaluate(STATUSES, mine) == [200, 200, 200]
            # every study file by its path (this item's, other items', the gold item's)
            assert len(every_file) == 12
            assert page.evaluate(STATUSES, every_file) == [404] * 12
            # another rater's current clips, and numbered addresses of this assignment
            assert page.evaluate(STATUSES, theirs) == [404] * 3
            assignment = page.url.rsplit("/", 1)[1]
            numbered = [f"/clip/{assignment}/{n}" for n in (1, 2, 3)]
            assert page.evaluate(STATUSES, numbered) == [404] * 3
            # after the vote the answered item's clips are gone too
            page.evaluate(PLAY_ALL)
            page.wait_for_selector("#vote-a:enabled", timeout=PLAYBACK_TIMEOUT_MS)
            page.click("#vote-a")
            page.wait_for_url("**/reveal")
            assert page.evaluate(STATUSES, mine) == [404] * 3
            page.click("#next")
            page.wait_for_url(f"{server.url}/item/*")
            fresh = page.evaluate(CLIP_SRCS)
            assert page.evaluate(STATUSES, fresh) == [200, 200, 200]
    finally:
        first.close()
        second.close()


def test_a_reload_after_listening_keeps_the_answer_enabled_and_the_reason(
    page: Any, tmp_path: Path
) -> None:
    app = create_app(make_study(tmp_path / "study", "arena", items=1, min_time_factor=0))
    with LiveServer(app) as server:
        _log_in(page, server, invite(app)[0])
        item_url = page.url
        page.evaluate(PLAY_ALL)
        page.wait_for_selector("#vote-a:enabled", timeout=PLAYBACK_TIMEOUT_MS)
        page.fill("#reason", "A answers; B repeats itself")
        for leave in (page.reload, lambda: (page.goto(f"{server.url}/training"), page.go_back())):
            leave()
            assert page.url == item_url
            page.wait_for_load_state("load")
            page.wait_for_timeout(700)  # the script's gate check runs every 0.5 s
            for button in ("#vote-a", "#vote-b", "#vote-tie", "#vote-both-bad"):
                assert page.locator(button).is_enabled(), button
            states = page.locator(".clip-state").all_inner_texts()
            assert states == ["played ✓"] * 3
            assert page.locator("#gate-status").inner_text() == "You can answer now."
            assert page.input_value("#reason") == "A answers; B repeats itself"
        page.click("#vote-b")
        page.wait_for_url(f"{item_url}/reveal")
    [row] = _responses(app)
    assert row.answer["reason"] == "A answers; B repeats itself"


SEEK_TO_END = """Promise.all([...document.querySelectorAll('audio[data-clip]')].map(a =>
  a.play().then(() => { a.currentTime = a.duration - 0.05; })))"""


def test_seeking_every_clip_to_its_end_does_not_open_the_answer(page: Any, tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", "arena", items=1, min_time_factor=0, clip_s=1.5)
    app = create_app(study)
    with LiveServer(app) as server:
        _log_in(page, server, invite(app)[0])
        page.evaluate(SEEK_TO_END)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.clip-state')]"
            ".every(s => s.textContent.startsWith('not counted'))",
            timeout=10000,
        )
        page.wait_for_timeout(600)
        assert page.locator("#vote-a").is_disabled()
        assert "Play every clip" in page.locator("#gate-status").inner_text()
        # the server refuses a vote posted anyway
        csrf = page.locator("#answer-form input[name=csrf_token]").get_attribute("value")
        refused = page.request.post(page.url, form={"csrf_token": csrf, "choice": "a"})
        assert refused.status == 422
        # listening to each clip from the start opens it
        page.evaluate(
            "[...document.querySelectorAll('audio[data-clip]')]"
            ".forEach(a => { a.currentTime = 0; a.play(); })"
        )
        page.wait_for_selector("#vote-a:enabled", timeout=PLAYBACK_TIMEOUT_MS)
        assert page.locator(".clip-state").all_inner_texts() == ["played ✓"] * 3
    assert _responses(app) == []


def test_the_refusal_names_clips_as_shown_and_clears_when_the_gate_opens(
    page: Any, tmp_path: Path
) -> None:
    app = create_app(make_study(tmp_path / "study", "arena", items=1, min_time_factor=0))
    with LiveServer(app) as server:
        _log_in(page, server, invite(app)[0])
        page.fill("#reason", "too early")
        # posted before listening (the script would not let the buttons do it)
        page.evaluate(
            "HTMLFormElement.prototype.submit.call(document.getElementById('answer-form'))"
        )
        page.wait_for_selector("#server-error")
        # The refusal is a new page: its element can be there before its script has run and
        # listens for playback, and clips played earlier would never be reported (seen once,
        # on a loaded machine).
        page.wait_for_load_state("load")
        error = page.locator("#server-error").inner_text()
        assert "clip 2 (Reply A, turn 1)" in error and "clip 3 (Reply B, turn 1)" in error
        assert error.startswith("Play every clip")
        assert page.input_value("#reason") == "too early"
        page.evaluate(PLAY_ALL)
        page.wait_for_selector("#vote-a:enabled", timeout=PLAYBACK_TIMEOUT_MS)
        page.wait_for_selector("#server-error", state="detached", timeout=2000)
        assert page.locator("#gate-status").inner_text() == "You can answer now."


def test_both_apps_have_a_favicon(page: Any, tmp_path: Path) -> None:
    app = create_app(make_study(tmp_path / "study", "arena", items=1))
    with LiveServer(app) as server:
        page.goto(f"{server.url}/login")
        icon = page.locator("link[rel=icon]").get_attribute("href")
        for url in (icon, "/favicon.ico"):
            response = page.request.get(f"{server.url}{url}")
            assert response.status == 200 and response.headers["content-type"] == "image/svg+xml"
            assert response.body().startswith(b"<svg")
