"""``voxeval leaderboard``: Markdown, CSV and JSON files with the runs' statistics, ranks with
rank intervals and provenance; same runs, same bytes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.report.compare_runs_fixtures import live_run, live_suite, stored_run
from voxeval.cli.main import app
from voxeval.report.leaderboard import build_leaderboard
from voxeval.store.records import ScoreRow


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("board")
    suite = live_suite(tmp / "suite")
    return [live_run(tmp, "before", suite, "expected"), live_run(tmp, "after", suite, "wrong")]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, ["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _expected(run: Path) -> tuple[dict, dict]:
    summary = json.loads((run / "report" / "summary.json").read_text())
    provenance = yaml.safe_load((run / "run.yaml").read_text())
    return summary, provenance


def test_json_rows_hold_the_runs_statistics_ranks_and_provenance(
    tmp_path: Path, runs: list[Path]
) -> None:
    out = tmp_path / "board.json"
    _invoke(*map(str, runs), "-o", str(out))
    board = json.loads(out.read_text())
    assert board["metrics"] == ["task_completion"] and board["rank_metric"] == "task_completion"
    rows = board["rows"]
    assert [(r["system"], r["rank"], r["rank_best"], r["rank_worst"]) for r in rows] == [
        ("agent", 1, 1, 1),  # the expected path: 1.0 [0.74, 1] is wholly above 0.17 [...]
        ("agent", 2, 2, 2),
    ]
    for row, run in zip(rows, runs, strict=True):
        summary, provenance = _expected(run)
        stat = summary["systems"]["agent"]["overall"]["task_completion"]
        got = row["metrics"]["task_completion"]
        assert {k: got[k] for k in ("mean", "ci_low", "ci_high", "n", "clusters")} == {
            k: stat[k] for k in ("mean", "ci_low", "ci_high", "n", "clusters")
        }
        assert row["run_id"] == summary["run_id"] == provenance["run_id"]
        assert row["suite"] == "mini-calls" and row["protocol"] == "live_call"
        assert row["suite_version"].startswith("sha256:")
        assert row["seed"] == 3 and row["judge"] is None
        assert row["voxeval_version"] == provenance["voxeval_version"]
        assert row["date"] == provenance["started_at"]
        git = (provenance["environment"] or {}).get("git")
        assert row["commit"] == (
            git["commit"] + ("+dirty" if git["dirty"] else "") if git else None
        )
    assert rows[0]["metrics"]["task_completion"]["mean"] == 1.0
    assert rows[1]["metrics"]["task_completion"]["mean"] == pytest.approx(2 / 12)


def test_csv_and_markdown_carry_the_same_values_and_repeat_bytes(
    tmp_path: Path, runs: list[Path]
) -> None:
    _invoke(*map(str, runs), "-o", str(tmp_path / "a.csv"))
    _invoke(*map(str, runs), "-o", str(tmp_path / "b.csv"))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    table = list(csv.DictReader(io.StringIO((tmp_path / "a.csv").read_text())))
    summary, provenance = _expected(runs[1])
    second = table[1]
    stat = summary["systems"]["agent"]["overall"]["task_completion"]
    assert second["run_id"] == summary["run_id"]
    assert float(second["task_completion_mean"]) == stat["mean"]
    assert float(second["task_completion_ci_low"]) == stat["ci_low"]
    assert float(second["task_completion_ci_high"]) == stat["ci_high"]
    assert (second["rank"], second["rank_best"], second["rank_worst"]) == ("2", "2", "2")
    assert second["suite"] == "mini-calls" and second["seed"] == "3"
    assert second["date"] == provenance["started_at"] and second["judge"] == ""

    _invoke(*map(str, runs), "-o", str(tmp_path / "board.txt"), "--format", "md")
    markdown = (tmp_path / "board.txt").read_text()
    assert markdown.startswith("# Leaderboard: mini-calls (live_call)")
    assert f"| 2 | 2–2 | agent | {summary['run_id']} | 0.167 [" in markdown
    assert f"| none | 3 | {provenance['voxeval_version']} |" in markdown  # judge, seed, version


def test_unknown_extension_is_refused_before_any_work(tmp_path: Path, runs: list[Path]) -> None:
    result = CliRunner().invoke(app, ["leaderboard", str(runs[0]), "-o", str(tmp_path / "b.txt")])
    assert result.exit_code == 2 and "--format" in result.output
    assert not (tmp_path / "b.txt").exists()


def _wer(system: str, item: str, trial: int, value: float | None) -> ScoreRow:
    return ScoreRow(
        item, system, trial, "clean", "cat", "stt_wer", value, None,
        None if value is not None else "no reply to transcribe",
    )  # fmt: skip


def test_rank_intervals_lower_is_better_single_unit_and_no_value(tmp_path: Path) -> None:
    rows = []
    for i, (a, b) in enumerate([(0.0, 0.9), (0.05, 0.95), (0.1, 1.0), (0.0, 0.9), (0.05, 0.95),
                                (0.1, 1.0)]):  # fmt: skip
        rows += [_wer("a", f"x{i}", 0, a), _wer("b", f"x{i}", 0, b), _wer("e", f"x{i}", 0, None)]
    rows += [_wer("d", "x0", 0, 0.4), _wer("d", "x0", 1, 0.6)]  # one scenario: no interval
    judge = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "judge-m"}
    run = stored_run(tmp_path, "run", rows, seed=2, judge=judge)
    board = build_leaderboard([run], metrics=["stt_wer"])
    got = [(r["system"], r["rank"], r["rank_best"], r["rank_worst"]) for r in board.rows]
    assert got == [
        ("a", 1, 1, 2),  # wholly better than b only (d's interval is unbounded)
        ("d", 1, 1, 3),  # a single scenario: it could sit anywhere
        ("b", 2, 2, 3),
        ("e", None, None, None),  # no value: listed last, unranked
    ]
    assert board.better == {"stt_wer": "lower"}
    assert board.rows[0]["judge"] == "openai:judge-m" and board.rows[0]["suite_version"] == "1.0"
    assert board.rows[1]["metrics"]["stt_wer"]["ci_note"] == "too few clusters"
