from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

import tests.runner.toy_protocol  # noqa: F401  (registers the toy protocol and suite)
from tests.runner.test_execute import log_counts
from tests.runner.toy_protocol import TOY_JUDGE, write_config, write_suite
from voxeval.cli.main import app

runner = CliRunner()


def test_run_report_score_commands(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=4, log=str(log))
    config = write_config(tmp_path / "cfg.yaml", suite)
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["run", str(config), "--out", str(out), "--limit", "3", "--trials", "2", "--seed", "5"]
    )
    assert result.exit_code == 0, result.output
    assert f"report: {out.resolve() / 'report' / 'summary.md'}" in result.stdout
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["seed"] == 5 and summary["systems"]["echo"]["units"]["done"] == 6
    assert summary["echo"] == summary["systems"]["echo"]  # per-system view at the top level

    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    interacts = sum(log_counts(log, "interact").values())
    result = runner.invoke(app, ["score", str(out), "--metrics", "parity"])
    assert result.exit_code == 0, result.output
    assert sum(log_counts(log, "interact").values()) == interacts
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert "parity" in summary["systems"]["echo"]["overall"]

    judge = tmp_path / "judge.yaml"
    judge.write_text(yaml.safe_dump({"judge": TOY_JUDGE}))
    result = runner.invoke(app, ["score", str(out), "--metrics", "judge", "--config", str(judge)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["systems"]["echo"]["overall"]["judge"]["n"] == 6


def test_run_errors_are_friendly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2


def test_suites_lists_registered_suites() -> None:
    result = runner.invoke(app, ["suites", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {"name": "toy-registered", "protocol": "toy"}.items() <= next(
        r for r in rows if r["name"] == "toy-registered"
    ).items()


def test_end_of_run_table_shows_corpus_wer_and_independent_units() -> None:
    from io import StringIO

    from rich.console import Console

    from voxeval.cli.commands_run import summary_table

    wer = {
        "mean": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 12, "clusters": 4,
        "wer_corpus": 0.15, "median": 0.18,
    }  # fmt: skip
    summary = {"systems": {"tiny": {"overall": {"wer": wer}, "statistics": {"unit": "query"}}}}
    out = StringIO()
    Console(file=out, width=200).print(summary_table(summary))
    text = out.getvalue()
    assert "wer (corpus 0.15, median 0.18)" in text
    assert "12 (4 queries)" in text


def test_end_of_run_table_leads_with_the_protocols_headline_metrics() -> None:
    """A live-call run has more metrics than the table shows: task completion, tool-call
    validity and turn-taking come first instead of the first twelve alphabetically."""
    from io import StringIO

    from rich.console import Console

    from voxeval.cli.commands_run import MAX_TABLE_METRICS, summary_table
    from voxeval.protocols.live_call import default_metrics

    names = sorted(default_metrics(judged=True, audio_judged=True))
    assert len(names) > MAX_TABLE_METRICS
    overall = {m: {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 3} for m in names}
    summary = {
        "suite": {"name": "calls", "protocol": "live_call"},
        "systems": {"bot": {"overall": overall, "statistics": {"unit": "scenario"}}},
    }
    out = StringIO()
    Console(file=out, width=200).print(summary_table(summary))
    rows = [line.split("│")[2].strip() for line in out.getvalue().splitlines() if "│ bot" in line]
    assert rows[:3] == ["task_completion", "tool_call_validity", "turn_taking"]
    assert len(rows) == MAX_TABLE_METRICS + 1
    assert rows[-1] == f"({len(names) - MAX_TABLE_METRICS} more metrics in report/summary.md)"
