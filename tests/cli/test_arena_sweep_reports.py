"""A clean sweep (one system wins every comparison) never looks certain: in summary.json, in
summary.md, in index.html (tables and the forest plot's data), in the run viewer and in the
leaderboard its rating is said to be unbounded, with no zero-width interval and no certain
rank. Before, Bradley-Terry gave the ridge-set value with ci_low == ci_high and rank [1, 1],
and only summary.json's ``unbounded`` list (which no report showed) knew better."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.arena_release import run_release, shown_models
from tests.fakes.openai_server import FakeResponse, chat_text
from voxeval.cli.main import app

MODELS = ("Alpha-Voice", "Beta-Voice")
WON = "unbounded (won every battle)"
LOST = "unbounded (lost every battle)"


def alpha_always_wins(path: str, body: dict[str, Any]) -> FakeResponse:
    a, _ = shown_models(body, MODELS)
    winner = "A" if a == "Alpha-Voice" else "B"
    return chat_text(json.dumps({"winner": winner, "reason": "clearer"}))


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sweep")
    result, out, _ = run_release(tmp, MODELS, 5, alpha_always_wins, {"resamples": 200})
    assert result.exit_code == 0, result.output
    return out


def test_summary_json_marks_the_sweep_unbounded(sweep_run: Path) -> None:
    summary = json.loads((sweep_run / "report" / "summary.json").read_text(encoding="utf-8"))
    semantic = summary["arena"]["dimensions"]["semantic"]
    for report in (semantic["bt"], semantic["elo_intervals"], semantic["style_controlled"]):
        alpha, beta = report["systems"]["Alpha-Voice"], report["systems"]["Beta-Voice"]
        assert alpha["unbounded"].startswith("won every battle")
        assert beta["unbounded"].startswith("lost every battle")
        for entry in (alpha, beta):
            assert entry["ci_low"] is None and entry["ci_high"] is None  # no zero width
            assert (entry["rank_low"], entry["rank_high"]) == (1, 2)  # no certain rank
    assert semantic["elo"]["Alpha-Voice"] > 1000  # the online Elo itself is reported


def test_summary_md_and_index_html_say_unbounded(sweep_run: Path) -> None:
    markdown = (sweep_run / "report" / "summary.md").read_text(encoding="utf-8")
    assert "## Arena ratings" in markdown and "### Arena: semantic" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| Alpha-Voice"))
    assert row.count(WON) == 2  # Elo and Bradley-Terry
    assert "(ridge-bound)" in row and "1 (1–2)" in row
    assert LOST in markdown
    html = (sweep_run / "report" / "index.html").read_text(encoding="utf-8")
    assert WON in html and LOST in html
    assert "e+03" not in html  # ratings are whole numbers, never an exponent
    # the forest plot's data table names why
    assert "won every battle: the rating is bounded only by the fit&#x27;s ridge" in html


def test_viewer_run_page_says_unbounded(sweep_run: Path) -> None:
    from fastapi.testclient import TestClient

    from voxeval.viewer import create_app

    with TestClient(create_app([], sweep_run.parent)) as client:
        page = client.get(f"/runs/{sweep_run.name}")
    assert page.status_code == 200
    assert "Arena ratings" in page.text
    assert WON in page.text and LOST in page.text


def test_leaderboard_says_unbounded(sweep_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for name in ("board.md", "board.json"):
        result = runner.invoke(app, ["leaderboard", str(sweep_run), "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    board = (tmp_path / "board.md").read_text(encoding="utf-8")
    assert "## Arena ratings" in board
    alpha = next(line for line in board.splitlines() if "| Alpha-Voice |" in line and WON in line)
    assert alpha.count(WON) == 2
    rows = json.loads((tmp_path / "board.json").read_text(encoding="utf-8"))["arena"]
    by_system = {row["system"]: row for row in rows}
    assert by_system["Alpha-Voice"]["bt"]["unbounded"].startswith("won every battle")
    assert by_system["Alpha-Voice"]["bt"]["ci_low"] is None
