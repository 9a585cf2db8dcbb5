"""The rater app over real HTTP requests: the vote flow, and every safety rule refusing what
it should (CSRF 403, duplicate 409, traversal 404, rate limit 429, listening gate 422)."""

from __future__ import annotations

import os
import re
import time
from html import unescape
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.raters.rater_client import (
    clip_numbers,
    clip_urls,
    invite,
    logged_in,
    next_assignment,
    play_all,
    start,
)
from tests.raters.study_builder import csrf_of, make_study, write_tone
from voxeval.raters.schema import accounts_table, assignments_table, responses_table


def _responses(app):  # type: ignore[no-untyped-def]
    with app.state.site.engine.connect() as conn:
        return conn.execute(select(responses_table)).all()


@pytest.fixture
def arena(tmp_path: Path):  # type: ignore[no-untyped-def]
    return start(make_study(tmp_path / "study", "arena", items=3, min_time_factor=0))


def test_vote_is_stored_and_names_revealed_after(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    assert "alpha-sys" not in html and "beta-sys" not in html  # anonymous until the vote
    assert clip_numbers(html) == [1, 2, 3]
    play_all(client, assignment, html)
    response = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html), "choice": "a", "reason": "clearer"},
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/item/{assignment}/reveal"
    [row] = _responses(arena)
    assert row.answer["choice"] == "a" and row.answer["reason"] == "clearer"
    assert row.answer["winner"] == row.answer["first"]
    assert {row.answer["first"], row.answer["second"]} == {"alpha-sys", "beta-sys"}
    reveal = client.get(f"/item/{assignment}/reveal")
    assert row.answer["first"] in reveal.text and row.answer["second"] in reveal.text
    # the next request gives a different item
    second, _ = next_assignment(client)
    assert second != assignment


def test_title_is_escaped(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    _, html = next_assignment(client)
    assert "&lt;" in html and "constraint <" not in html


def test_requests_without_or_with_a_wrong_csrf_token_are_refused(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    play_all(client, assignment, html)
    assert client.post(f"/item/{assignment}", data={"choice": "a"}).status_code == 403
    wrong = client.post(f"/item/{assignment}", data={"choice": "a", "csrf_token": "x" * 43})
    assert wrong.status_code == 403
    api = client.post("/api/playback", json={"assignment": assignment, "clip": 1, "event": "play"})
    assert api.status_code == 403
    assert _responses(arena) == []
    # log-in form: the pre-session token is checked too
    fresh = logged_in(arena, invite(arena)[0], train=False)
    fresh.cookies.clear()
    assert fresh.post("/login", data={"token": "whatever"}).status_code == 403


def test_second_answer_to_the_same_item_is_refused(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    play_all(client, assignment, html)
    data = {"csrf_token": csrf_of(html), "choice": "b"}
    assert client.post(f"/item/{assignment}", data=data).status_code == 303
    again = client.post(f"/item/{assignment}", data={**data, "choice": "a"})
    assert again.status_code == 409
    [row] = _responses(arena)
    assert row.answer["choice"] == "b"


def test_audio_paths_outside_the_study_audio_are_not_found(arena, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena, role="admin")[0], train=False)
    assert client.get("/audio/audio/item-0/u1.wav").status_code == 200
    assert client.get("/audio/audio/item-0/u1.wav").headers["content-type"] == "audio/wav"
    secret = tmp_path / "secret.wav"
    secret.write_bytes(b"RIFF-not-yours")
    os.symlink(secret, tmp_path / "study" / "audio" / "link.wav")
    for path in (
        "/audio/../study.db",
        "/audio/audio/../study.db",
        "/audio/audio/..%2f..%2fsecret.wav",
        "/audio/audio/%2e%2e/%2e%2e/secret.wav",
        "/audio/audio/link.wav",
        "/audio/study.yaml",
        "/audio/audio/item-0/missing.wav",
    ):
        assert client.get(path).status_code == 404, path
    # a clip token that is not on any page
    rater = logged_in(arena, invite(arena)[0])
    assert rater.get("/clip/" + "A" * 32).status_code == 404


def test_answers_over_the_rate_limit_get_429(tmp_path: Path) -> None:
    app = start(
        make_study(tmp_path / "s", "arena", items=3, min_time_factor=0, rate_limit_per_minute=1)
    )
    client = logged_in(app, invite(app)[0])
    for expected in (303, 429):
        assignment, html = next_assignment(client)
        play_all(client, assignment, html)
        response = client.post(
            f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "tie"}
        )
        assert response.status_code == expected
    assert len(_responses(app)) == 1


def test_answer_before_every_clip_ended_gets_422_naming_the_clips(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    response = client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "a"})
    assert response.status_code == 422
    assert "clip 1" in response.text and "clip 3" in response.text
    # an "ended" reported far before the clip's end does not count
    client.post(
        "/api/playback",
        json={"assignment": assignment, "clip": 1, "event": "ended", "media_time": 0.01},
        headers={"X-CSRF-Token": csrf_of(html)},
    )
    again = client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "a"})
    assert again.status_code == 422 and "clip 1" in again.text
    assert _responses(arena) == []


def test_minimum_time_on_page_is_enforced(tmp_path: Path) -> None:
    app = start(make_study(tmp_path / "s", "arena", items=1, min_time_factor=100))
    client = logged_in(app, invite(app)[0])
    assignment, html = next_assignment(client)
    play_all(client, assignment, html)
    response = client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "a"})
    assert response.status_code == 422
    assert "more second" in response.text
    assert "disabled" in response.text  # the buttons are rendered disabled too


def test_invalid_choice_is_refused(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    play_all(client, assignment, html)
    response = client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "c"})
    assert response.status_code == 422 and "field 'choice'" in unescape(response.text)
    long = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html), "choice": "a", "reason": "x" * 2001},
    )
    assert long.status_code == 422 and "field 'reason'" in unescape(long.text)


def test_security_headers_and_cookie_flags(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0], train=False)
    page = client.get("/login")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-content-type-options"] == "nosniff"
    fresh = start.__globals__["TestClient"](arena, follow_redirects=False)
    login = fresh.get("/login")
    response = fresh.post(
        "/login", data={"token": invite(arena)[0], "csrf_token": csrf_of(login.text)}
    )
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_wrong_token_is_refused_and_only_hashes_are_stored(arena) -> None:  # type: ignore[no-untyped-def]
    token = invite(arena)[0]
    client = start.__globals__["TestClient"](arena, follow_redirects=False)
    page = client.get("/login")
    bad = client.post("/login", data={"token": "nope", "csrf_token": csrf_of(page.text)})
    assert bad.status_code == 401 and "nope" not in bad.text
    with arena.state.site.engine.connect() as conn:
        stored = [r.token_sha256 for r in conn.execute(select(accounts_table))]
    assert token not in stored and len(stored[0]) == 64


def test_training_is_required_before_the_first_item(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0], train=False)
    assert client.get("/").headers["location"] == "/training"
    assert client.get("/item/1").headers["location"] == "/training"


def test_admin_dashboard_shows_progress_and_refuses_raters(arena) -> None:  # type: ignore[no-untyped-def]
    rater = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(rater)
    play_all(rater, assignment, html)
    rater.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "a"})
    assert rater.get("/admin").status_code == 403
    admin = logged_in(arena, invite(arena, role="admin")[0], train=False)
    page = admin.get("/admin")
    assert page.status_code == 200
    assert "1 answer(s) from 1 rater(s)" in page.text
    assert "1 / 3" in page.text and "0 / 3" in page.text
    assert 'id="quality-table"' in page.text  # quality.rater_quality, one row per rater
    assert "agreement_outlier" not in page.text  # nobody flagged after one answer


def test_vote_flow_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    app = start(make_study(tmp_path / "s", "score", items=2, min_time_factor=0), postgres_url)
    client = logged_in(app, invite(app)[0])
    assignment, html = next_assignment(client)
    assert "names the city" in html  # the checklist is shown
    play_all(client, assignment, html)
    data = {"csrf_token": csrf_of(html), "score": "7", "reason": "fine"}
    assert client.post(f"/item/{assignment}", data=data).status_code == 303
    assert client.post(f"/item/{assignment}", data=data).status_code == 409
    [row] = _responses(app)
    assert row.answer == {"system": "alpha-sys", "score": 7, "reason": "fine"}
    app.state.site.engine.dispose()


def test_rubric_answer_and_gold_check(tmp_path: Path) -> None:
    app = start(make_study(tmp_path / "s", "rubric", items=1, min_time_factor=0))
    client = logged_in(app, invite(app)[0])
    assignment, html = next_assignment(client)
    play_all(client, assignment, html)
    data = {"csrf_token": csrf_of(html), "criterion-c1": "1", "reason": "ok"}
    assert client.post(f"/item/{assignment}", data=data).status_code == 303
    [row] = _responses(app)
    assert row.answer["criteria"] == {"c1": 1} and row.gold_correct is None


def test_gold_arena_answer_is_checked_against_the_item_sides(tmp_path: Path) -> None:
    app = start(
        make_study(tmp_path / "s", "arena", items=1, gold=1, min_time_factor=0, gold_every=1)
    )
    client = logged_in(app, invite(app)[0])
    for _ in range(2):
        assignment, html = next_assignment(client)
        play_all(client, assignment, html)
        # vote for the side that shows system alpha (the gold answer "a" is alpha)
        choice = "a"
        shown = client.post(
            f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": choice}
        )
        assert shown.status_code == 303
    rows = {r.item_id: r for r in _responses(app)}
    gold = rows["gold-1"]
    assert gold.gold_correct is (gold.answer["winner"] == "alpha-sys")
    assert rows["item-0"].gold_correct is None


def test_recordings_are_served_to_admins_only(tmp_path: Path) -> None:
    study = make_study(tmp_path / "s", "record", items=1)
    write_tone(study / "recordings" / "item-0" / "someone.wav", 200)
    app = start(study)
    rater = logged_in(app, invite(app)[0])
    assert rater.get("/audio/recordings/item-0/someone.wav").status_code == 404
    admin = logged_in(app, invite(app, role="admin")[0], train=False)
    assert admin.get("/audio/recordings/item-0/someone.wav").status_code == 200
    assert admin.get("/").headers["location"] == "/admin"


def test_another_raters_item_is_not_found(arena) -> None:  # type: ignore[no-untyped-def]
    first = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(first)
    second = logged_in(arena, invite(arena)[0])
    for path in (f"/item/{assignment}", f"/item/{assignment}/reveal", "/item/999999"):
        assert second.get(path).status_code == 404, path
    for url in clip_urls(html):
        assert first.get(url).status_code == 200
        assert second.get(url).status_code == 404, url


def test_a_rater_fetches_only_the_clips_of_their_current_item(arena) -> None:  # type: ignore[no-untyped-def]
    study = arena.state.site.study_dir
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    urls = clip_urls(html)
    assert len(urls) == 3 and len(set(urls)) == 3
    served = {client.get(url).content for url in urls}
    with arena.state.site.engine.connect() as conn:
        item_id = conn.execute(
            select(assignments_table.c.item_id).where(
                assignments_table.c.assignment_id == assignment
            )
        ).scalar_one()
    on_disk = {p.read_bytes() for p in (study / "audio" / item_id).glob("*.wav")}
    assert served == on_disk  # the page's own clips play
    for url in urls:  # opaque: neither the item, the stimulus nor the side shows
        token = url.removeprefix("/clip/")
        assert len(token) >= 32 and item_id not in token
        # random URL-safe text: no path, file name or separator a rater could read; (a
        # substring test for "a1" would fail by chance on about one page in six)
        assert re.fullmatch(r"[A-Za-z0-9_-]+", token), token
    # no study file by its computable path, this item's or any other's
    for wav in sorted((study / "audio").rglob("*.wav")):
        relative = wav.relative_to(study).as_posix()
        assert client.get(f"/audio/{relative}").status_code == 404, relative
    # the old numbered address is gone
    assert client.get(f"/clip/{assignment}/1").status_code == 404
    # once answered, the item's clips are no longer served; the next item's are
    play_all(client, assignment, html)
    client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html), "choice": "a"})
    for url in urls:
        assert client.get(url).status_code == 404, url
    second, next_html = next_assignment(client)
    next_urls = clip_urls(next_html)
    assert second != assignment and not set(next_urls) & set(urls)
    assert all(client.get(url).status_code == 200 for url in next_urls)
    # a reload keeps the same addresses (the audio elements need not fetch again)
    assert clip_urls(client.get(f"/item/{second}").text) == next_urls


def _wav_bytes(hz: float, rate: int, seconds: float = 0.5) -> bytes:
    import io

    import numpy as np
    import soundfile as sf

    t = np.arange(int(rate * seconds)) / rate
    buffer = io.BytesIO()
    sf.write(buffer, (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def test_recording_upload_is_resampled_and_a_second_take_is_refused(tmp_path: Path) -> None:
    import soundfile as sf

    study = make_study(tmp_path / "s", "record", items=1, min_time_factor=0, sample_rate=16000)
    app = start(study)
    client = logged_in(app, invite(app)[0])
    assignment, html = next_assignment(client)
    missing = client.post(f"/item/{assignment}", data={"csrf_token": csrf_of(html)})
    assert missing.status_code == 422 and "field &#39;recording&#39;" in missing.text
    garbage = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html)},
        files={"recording": ("take.webm", b"\x1a\x45\xdf\xa3 not really", "audio/webm")},
    )
    assert garbage.status_code == 422 and "could not be used" in garbage.text
    first = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html)},
        files={"recording": ("take.wav", _wav_bytes(440, 44100), "audio/wav")},
    )
    assert first.status_code == 303
    [row] = _responses(app)
    path = study / row.answer["path"]
    data, rate = sf.read(str(path))
    assert rate == 16000 and len(data) == 8000
    before = path.read_bytes()
    second = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html)},
        files={"recording": ("take.wav", _wav_bytes(880, 44100), "audio/wav")},
    )
    assert second.status_code == 409
    assert path.read_bytes() == before  # the accepted take is untouched
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no staged leftovers


HUGE_IDS = (2**31, 2**63, 10**20)


def _huge_ids_are_not_found(app) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(app, invite(app)[0])
    _, html = next_assignment(client)
    csrf = csrf_of(html)
    for big in HUGE_IDS:
        for path in (f"/item/{big}", f"/item/{big}/reveal"):
            assert client.get(path).status_code == 404, path
        posted = client.post(f"/item/{big}", data={"csrf_token": csrf, "score": "5"})
        assert posted.status_code == 404, big
        api = client.post(
            "/api/playback",
            json={"assignment": big, "clip": 1, "event": "play", "media_time": 0.0},
            headers={"X-CSRF-Token": csrf},
        )
        assert api.status_code == 404 and api.json()["error"], big
    assert client.get("/clip/" + "9" * 70).status_code == 404
    assert client.get("/healthz").status_code == 200  # and the server is still fine


def test_huge_ids_are_not_found_on_sqlite(tmp_path: Path) -> None:
    _huge_ids_are_not_found(start(make_study(tmp_path / "s", "score", items=1)))


def test_huge_ids_are_not_found_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    app = start(make_study(tmp_path / "s", "score", items=1), postgres_url)
    try:
        _huge_ids_are_not_found(app)
    finally:
        app.state.site.engine.dispose()


def test_a_clip_counts_only_when_listened_for_about_its_length(tmp_path: Path) -> None:
    app = start(make_study(tmp_path / "s", "score", items=1, min_time_factor=0, clip_s=1.0))
    client = logged_in(app, invite(app)[0])
    assignment, html = next_assignment(client)
    csrf = csrf_of(html)

    def report(clip: int, event: str, at: float) -> list[int]:
        response = client.post(
            "/api/playback",
            json={"assignment": assignment, "clip": clip, "event": event, "media_time": at},
            headers={"X-CSRF-Token": csrf},
        )
        assert response.status_code == 200, response.text
        played: list[int] = response.json()["played"]
        return played

    # clip 1 skipped to its end, clip 2 stopped after 0.4 of its 1.0 s then skipped
    report(1, "play", 0.0)
    assert report(1, "ended", 1.0) == []
    report(2, "play", 0.0)
    time.sleep(0.4)
    assert report(2, "ended", 1.0) == []
    answer = client.post(f"/item/{assignment}", data={"csrf_token": csrf, "score": "5"})
    assert answer.status_code == 422
    assert "clip 1 (" in answer.text and "clip 2 (" in answer.text
    # heard in two stretches with a pause between: counts; the other still does not
    report(1, "play", 0.0)
    time.sleep(0.45)
    report(1, "pause", 0.45)
    report(1, "play", 0.45)
    time.sleep(0.45)
    assert report(1, "ended", 1.0) == [1]
    # a second "play" without a pause restarts the timing (a reload mid-clip)
    report(2, "play", 0.0)
    time.sleep(0.5)
    report(2, "play", 0.0)
    assert report(2, "ended", 1.0) == [1]
    report(2, "play", 0.0)
    time.sleep(0.7)
    assert report(2, "ended", 1.0) == [1, 2]
    done = client.post(f"/item/{assignment}", data={"csrf_token": csrf, "score": "5"})
    assert done.status_code == 303


def test_the_item_page_carries_the_server_playback_state_and_the_typed_reason(arena) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(arena, invite(arena)[0])
    assignment, html = next_assignment(client)
    assert html.count('data-played="0"') == 3 and "played ✓" not in html
    play_all(client, assignment, html)
    again = client.get(f"/item/{assignment}").text
    assert again.count('data-played="1"') == 3 and again.count("played ✓") == 3
    refused = client.post(
        f"/item/{assignment}",
        data={"csrf_token": csrf_of(html), "choice": "maybe", "reason": "B <repeats> itself"},
    )
    assert refused.status_code == 422
    assert ">B &lt;repeats&gt; itself</textarea>" in refused.text
