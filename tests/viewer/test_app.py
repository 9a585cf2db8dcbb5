"""The viewer's pages over tiny real runs, through HTTP (Starlette's test client)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from voxeval.report.document import stat_cells
from voxeval.viewer import create_app

# The runs its pages show are scored with Whisper (the module's run fixture).
pytestmark = pytest.mark.models


def unit_seq(run: Path, item: str, system: str, condition: str = "clean") -> int:
    with sqlite3.connect(run / "index.sqlite") as db:
        (seq,) = db.execute(
            "SELECT seq FROM units WHERE item_id LIKE ? AND system = ? AND condition = ?",
            (f"{item}%", system, condition),
        ).fetchone()
    return int(seq)


def table_rows(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in html else ""
    return re.findall(r"<tr class=\"outcome-[a-z]+\".*?</tr>", body, flags=re.S)


def test_runs_list_shows_each_run_with_its_unit_counts(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    for name in ("single-run", "live-run", "audio-run"):
        assert f'href="/runs/{name}"' in html
    row = re.search(r'href="/runs/single-run".*?</tr>', html, flags=re.S).group(0)
    cells = re.findall(r'<td class="num[^"]*">(\d+)</td>', row)
    assert cells == ["3", "1", "0"]  # done, failed, pending
    assert "single_turn" in row and "broken, recorded" in row
    live = re.search(r'href="/runs/live-run".*?</tr>', html, flags=re.S).group(0)
    assert re.findall(r'<td class="num[^"]*">(\d+)</td>', live) == ["8", "0", "0"]
    assert "live_call" in live and "mini-calls" in live


def test_empty_root_explains_what_to_run(tmp_path: Path) -> None:
    with TestClient(create_app([], tmp_path)) as empty:
        html = empty.get("/").text
    assert 'id="empty-runs"' in html and "voxeval run" in html and "--out" in html


def test_run_page_shows_the_summary_numbers_and_links_the_report(
    client: Any, runs_root: Path
) -> None:
    summary = json.loads((runs_root / "live-run" / "report" / "summary.json").read_text())
    html = client.get("/runs/live-run").text
    for system in ("good", "wrong"):
        stat = summary["systems"][system]["overall"]["task_completion"]
        mean, ci, n = stat_cells(stat, "scenarios")
        section = html.split(f">{system}</h3>", 1)[1].split("</section>", 1)[0]
        row = re.search(r"task_completion</a></th>(.*?)</tr>", section, flags=re.S).group(1)
        assert re.findall(r"<td[^>]*>(.*?)</td>", row) == [mean, ci, n]
    assert summary["systems"]["wrong"]["overall"]["task_completion"]["mean"] == 0.0
    assert 'href="/runs/live-run/report"' in html
    report = client.get("/runs/live-run/report")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    assert report.text == (runs_root / "live-run" / "report" / "index.html").read_text()


def test_run_without_summary_says_how_to_write_it(tmp_path: Path) -> None:
    from voxeval.store import RunStore

    RunStore(tmp_path / "fresh").close()
    with TestClient(create_app([tmp_path / "fresh"])) as viewer:
        html = viewer.get("/runs/fresh").text
        units = viewer.get("/runs/fresh/units").text
    assert 'id="no-summary"' in html and f"voxeval report {tmp_path / 'fresh'}" in html
    assert "has not planned any" in html
    assert 'id="no-units"' in units and "voxeval run CONFIG --out" in units


def test_unit_table_filters_by_system_status_metric_and_outcome(client: Any) -> None:
    rows = table_rows(client.get("/runs/live-run/units").text)
    assert len(rows) == 8
    wrong = table_rows(client.get("/runs/live-run/units?system=wrong").text)
    assert len(wrong) == 4 and all("<td>wrong</td>" in r for r in wrong)
    failed_tc = client.get("/runs/live-run/units?metric=task_completion&outcome=fail").text
    assert "4 units match the filters" in failed_tc
    assert all("<td>wrong</td>" in r for r in table_rows(failed_tc))
    noisy = table_rows(
        client.get("/runs/live-run/units?condition=persona-forgetful_disorganized&system=good").text
    )
    assert len(noisy) == 2
    failed = table_rows(client.get("/runs/single-run/units?status=failed").text)
    assert len(failed) == 1 and "<td>broken</td>" in failed[0] and "input" in failed[0]
    # q1 passes its assertion for both systems; q2's reply names the forbidden "Paris"
    passing = table_rows(client.get("/runs/single-run/units?outcome=pass").text)
    assert [re.search(r">(q\d)__", r).group(1) for r in passing] == ["q1", "q1"]
    failing = table_rows(client.get("/runs/single-run/units?outcome=fail").text)
    assert sorted(re.search(r"<td>(broken|recorded)</td>", r).group(1) for r in failing) == [
        "broken",  # failed on our side (no reply)
        "recorded",  # the system's reply failed its assertion
    ]
    assert "No unit matches" in client.get("/runs/single-run/units?q=nothing-like-this").text


def test_unit_table_sorts_and_keeps_the_query_in_links(client: Any) -> None:
    html = client.get("/runs/live-run/units?metric=task_completion&sort=value&order=desc").text
    values = [re.findall(r'<td class="num">([^<]*)</td>', r)[3] for r in table_rows(html)]
    assert values == ["1"] * 4 + ["0"] * 4
    ascending = client.get("/runs/live-run/units?sort=system").text
    systems = [re.search(r"</a></td>\s*<td>(\w+)</td>", r).group(1) for r in table_rows(ascending)]
    assert systems == sorted(systems)
    # the header link of the current sort flips its order and keeps the filters
    assert "sort=system&amp;order=desc" in ascending
    filtered = client.get("/runs/live-run/units?system=good&metric=task_completion").text
    assert "system=good&amp;metric=task_completion&amp;sort=value" in filtered


def test_failed_call_page_shows_the_database_diff_and_tool_calls(
    client: Any, runs_root: Path
) -> None:
    seq = unit_seq(runs_root / "live-run", "book-1", "wrong")
    html = client.get(f"/runs/live-run/units/{seq}").text
    diff = html.split('id="db-diff"', 1)[1].split("</section>", 1)[0]
    assert "<code>KX4</code>" in diff and "<code>visit</code>" in diff
    assert "&#34;friday&#34;" in diff and "&#34;fridaX&#34;" in diff  # expected vs final
    assert "book_visit" in html and "verify_member" in html  # tool calls with their arguments
    assert "&#34;day&#34;: &#34;fridaX&#34;" in html
    assert 'id="score-task_completion"' in html
    tc = html.split('id="score-task_completion"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="bad">fail</span>' in tc
    assert "Intended" in html and "Sure. What is your member ID" in html
    assert 'class="timeline"' in html  # text-mode: the timeline alone
    good = unit_seq(runs_root / "live-run", "book-1", "good")
    assert 'id="db-match"' in client.get(f"/runs/live-run/units/{good}").text


def test_audio_call_page_plays_every_track_under_a_timeline(client: Any, runs_root: Path) -> None:
    html = client.get("/runs/audio-run/units/1").text
    sources = re.findall(r'<audio id="(track-\d)" controls preload="metadata" src="([^"]+)"', html)
    assert [Path(src).name for _, src in sources] == ["mixed.wav", "user.wav", "assistant.wav"]
    for _, src in sources:
        audio = client.get(src)
        assert audio.status_code == 200 and audio.headers["content-type"] == "audio/wav"
        assert audio.content[:4] == b"RIFF"
    svgs = re.findall(r"<svg class=\"timeline\".*?</svg>", html, flags=re.S)
    assert len(svgs) == 3
    events = [
        json.loads(line)
        for line in next((runs_root / "audio-run" / "items").rglob("events.jsonl"))
        .read_text()
        .splitlines()
    ]
    speech = [e for e in events if e["type"] == "speech"]
    tools = [e for e in events if e["type"] == "tool_call"]
    assert svgs[0].count('class="seg seg-') == len(speech)  # the mixed track carries the lanes
    assert svgs[0].count('<g class="tool') == len(tools) == 2
    assert 'data-track="track-0"' in svgs[0]
    ranged = client.get(sources[0][1], headers={"Range": "bytes=0-99"})
    assert ranged.status_code == 206 and len(ranged.content) == 100  # seeking works


def test_failed_unit_page_shows_the_cause_and_traceback(client: Any, runs_root: Path) -> None:
    seq = unit_seq(runs_root / "single-run", "q2", "broken")
    html = client.get(f"/runs/single-run/units/{seq}").text
    failure = html.split('id="failure"', 1)[1].split("</section>", 1)[0]
    assert "Cause: <strong>input</strong>" in failure
    assert "error.txt (traceback)" in failure and "has no reply for item" in failure


def test_single_turn_page_has_query_and_reply_audio_and_transcripts(
    client: Any, runs_root: Path
) -> None:
    seq = unit_seq(runs_root / "single-run", "q1", "recorded")
    html = client.get(f"/runs/single-run/units/{seq}").text
    names = re.findall(
        r'<audio id="track-\d" controls preload="metadata" src="[^"]+/([^/"]+)"', html
    )
    assert names == ["user.wav", "assistant.wav"]
    assert "Boil the egg for eight minutes." in html and "Transcript 3" in html
    assertions = html.split('id="score-assertions"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="ok">pass</span>' in assertions


def test_files_outside_the_run_or_of_other_kinds_are_not_served(
    client: Any, runs_root: Path, tmp_path: Path
) -> None:
    run = runs_root / "single-run"
    unit = next((run / "items").rglob("assistant.wav")).parent.relative_to(run).as_posix()
    assert client.get(f"/runs/single-run/files/{unit}/assistant.wav").status_code == 200
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    link = run / "items" / "escape.txt"
    os.symlink(secret, link)
    try:
        for path in (
            "items/escape.txt",  # a symlink out of the run
            "%2e%2e/single.yaml",  # .. encoded
            "items/..%2f..%2fsingle.yaml",
            "index.sqlite",  # not a kind the viewer serves
            "items/nope.wav",
        ):
            response = client.get(f"/runs/single-run/files/{path}")
            assert response.status_code == 404, path
            assert "not yours" not in response.text
    finally:
        link.unlink()
    assert client.get("/runs/nope").status_code == 404
    assert client.get("/runs/single-run/units/999").status_code == 404


def test_dialogue_page_has_a_player_per_reply_and_the_rubric(client: Any, runs_root: Path) -> None:
    run = runs_root / "dialogue-run"
    seq = unit_seq(run, "d1", "recorded")
    html = client.get(f"/runs/dialogue-run/units/{seq}").text
    names = re.findall(
        r'<audio id="track-\d" controls preload="metadata" src="[^"]+/([^/"]+)"', html
    )
    assert names == ["reply_1.wav", "reply_2.wav"]
    assert "reply to user turn 2" in html
    dialogue = html.split('id="dialogue-h"', 1)[1].split("</section>", 1)[0]
    assert (
        "&lt;anxious tone&gt; user says d1 turn 2" in dialogue and "recorded d1.turn2" in dialogue
    )
    stored = json.loads((run / "items" / "d1" / "recorded" / "0" / "scores.json").read_text())
    rubric = html.split('id="score-rubric"', 1)[1].split("</tr>", 1)[0]
    assert f'<td class="num">{stored["rubric"]["value"]:.3g}</td>' in rubric  # 0.75


def test_unit_pages_with_ids_beyond_any_integer_column_are_not_found(client: Any) -> None:
    for seq in (0, -1, 2**31, 2**63, 10**20):
        page = client.get(f"/runs/single-run/units/{seq}")
        assert page.status_code == 404, seq
        assert "has no unit" in page.text
    assert client.get("/runs/single-run").status_code == 200


def test_runs_named_on_the_command_line_are_listed_newest_first(
    runs_root: Path, tmp_path: Path
) -> None:
    import shutil

    order = []
    for n, name in enumerate(("zeta-old", "alpha-new")):  # given oldest first
        copy = shutil.copytree(runs_root / "single-run", tmp_path / name)
        stamp = 1_700_000_000 + 1000 * n
        os.utime(copy / "run.yaml", (stamp, stamp))
        order.append(copy)
    with TestClient(create_app(order)) as viewer:
        html = viewer.get("/").text
    assert "newest first" in html
    listed = re.findall(r'href="/runs/([a-z-]+)"', html)
    assert [s for s in listed if s in ("zeta-old", "alpha-new")][:2] == ["alpha-new", "zeta-old"]


def test_single_turn_unit_page_shows_the_query_text_and_its_checklist(
    client: Any, runs_root: Path
) -> None:
    seq = unit_seq(runs_root / "single-run", "q1", "recorded")
    html = client.get(f"/runs/single-run/units/{seq}").text
    query = html.split('id="query"', 1)[1].split("</section>", 1)[0]
    assert '<p id="query-text">How long do I boil an egg?</p>' in query
    assert re.findall(r"<li>([^<]+)</li>", query) == [
        "Gives a time in minutes",
        "Says soft or hard",
    ]
    other = client.get(
        f"/runs/single-run/units/{unit_seq(runs_root / 'single-run', 'q2', 'recorded')}"
    )
    assert "What&#39;s the weather like?" in other.text and "has no checklist" in other.text


def test_dialogue_unit_page_plays_each_user_turn(client: Any, runs_root: Path) -> None:
    run = runs_root / "dialogue-run"
    seq = unit_seq(run, "d1", "recorded")
    html = client.get(f"/runs/dialogue-run/units/{seq}").text
    urls = re.findall(r'<audio controls preload="none" class="user-turn" src="([^"]+)"', html)
    assert urls == [f"/runs/dialogue-run/units/{seq}/user-turns/{n}" for n in (1, 2)]
    stored = json.loads((run / "items" / "d1" / "recorded" / "0" / "dialogue.json").read_text())
    for url, turn in zip(urls, stored["turns"], strict=True):
        played = client.get(url)
        assert played.status_code == 200 and played.headers["content-type"] == "audio/wav"
        assert played.content == Path(turn["user_audio"]).read_bytes()
    for bad in (
        f"/runs/dialogue-run/units/{seq}/user-turns/3",
        "/runs/dialogue-run/units/99999/user-turns/1",
    ):
        assert client.get(bad).status_code == 404, bad


def test_transcripts_differing_only_in_case_are_not_highlighted(
    runs_root: Path, tmp_path: Path
) -> None:
    import shutil

    run = Path(shutil.copytree(runs_root / "single-run", tmp_path / "case-run"))
    seq = unit_seq(run, "q1", "recorded")
    [path] = [
        p
        for p in (run / "items").rglob("transcripts.json")
        if "recorded" in p.parts and any(part.startswith("q1") for part in p.parts)
    ]
    reply = json.loads((path.parent / "reply.json").read_text())["text"]
    data = json.loads(path.read_text())
    data["texts"] = [reply.upper(), "  " + reply.lower() + " ", reply.replace("eight", "ten")]
    path.write_text(json.dumps(data))
    with TestClient(create_app([run])) as viewer:
        html = viewer.get(f"/runs/case-run/units/{seq}").text
    rows = re.findall(r'<tr><th scope="row">Transcript \d</th><td([^>]*)>', html)
    assert rows == ["", "", ' class="differs"']


def test_a_failed_units_badge_does_not_read_done(client: Any) -> None:
    html = client.get("/runs/live-run/units?per_page=100").text
    badges = re.findall(
        r'<span class="badge badge-(\w+)" title="status: (\w+)">([^<]+)</span>', html
    )
    assert {kind for kind, _, _ in badges} >= {"pass", "fail"}
    for kind, status, label in badges:
        if kind in ("fail", "error"):
            assert "done" not in label and "failed" in label, (kind, status, label)
        if kind == "pass":
            assert label == "done" and status == "done"


def test_compare_page_says_queries_and_names_differing_settings(tmp_path: Path) -> None:
    import yaml

    from tests.report.compare_runs_fixtures import stored_run
    from voxeval.store.records import ScoreRow

    def rows(shift: float) -> list[ScoreRow]:
        return [
            ScoreRow(f"q{i}", "a", 0, "clean", "cat", "stt_wer", 0.1 * i + shift, None, None)
            for i in range(1, 5)
        ]

    base = stored_run(tmp_path, "base", rows(0.0), protocol="single_turn", suite_name="st")
    after = stored_run(tmp_path, "after", rows(0.05), protocol="single_turn", suite_name="st")
    doc = yaml.safe_load((after / "run.yaml").read_text(encoding="utf-8"))
    doc["config"]["systems"][0]["model"] = "gpt-4o-mini-realtime"
    doc["config"]["judge"] = {"provider": "openai", "model": "judge-2"}
    (after / "run.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with TestClient(create_app([base, after])) as viewer:
        html = viewer.get("/compare?run=base&run=after").text
    assert "over queries]" in html and "Paired items (queries)" in html and "querys" not in html
    warnings = html.split('id="compare-warnings"', 1)[1].split("</ul>", 1)[0]
    assert "system &#39;a&#39; is set up differently" in warnings and ": model)" in warnings
    assert re.search(
        r"scoring settings differ from base-\w+&#39;s \(judge.model, judge.provider\)", warnings
    )


def test_the_viewer_has_a_favicon(client: Any) -> None:
    html = client.get("/").text
    href = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', html).group(1)
    for url in (href, "/favicon.ico"):
        icon = client.get(url)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
        assert icon.content.startswith(b"<svg")
