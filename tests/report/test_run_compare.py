"""``compare_runs``: golden deltas and tests against scipy/statsmodels on the same paired
values, regression flags exactly where the runs differ, refusals, and the written files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from tests.report.compare_runs_fixtures import (
    SCENARIOS,
    UNCHANGED,
    live_run,
    live_suite,
    stored_run,
)
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.protocols.contract import WorkUnit
from voxeval.report.compare_document import write_comparison
from voxeval.report.run_compare import compare_runs
from voxeval.store.records import ScoreRow


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("live")
    suite = live_suite(tmp / "suite")
    other = live_suite(tmp / "other-suite", name="other-calls", ids=["s01"])
    return {
        "before": live_run(tmp, "before", suite, "expected"),
        "after": live_run(tmp, "after", suite, "wrong"),
        "reseeded": live_run(tmp, "reseeded", suite, "expected", seed=4),
        "other": live_run(tmp, "other", other, "expected"),
    }


def _exact_sign_flip_p(deltas: list[float]) -> float:
    result = stats.permutation_test(
        (np.asarray(deltas),),
        lambda x, axis=-1: np.abs(np.mean(x, axis=axis)),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="greater",
        vectorized=True,
    )
    return float(result.pvalue)


def test_regression_flagged_exactly_on_the_slipped_metric(live: dict[str, Path]) -> None:
    comparison = compare_runs([live["before"], live["after"]])
    data = comparison.to_dict()
    # the two runs script the agent differently: said, with the setting's name
    [warning] = data["warnings"]
    assert warning.startswith(f"{comparison.runs[1]['run_id']}: system 'agent' is set up")
    assert "(settings that differ: script)" in warning
    assert [(f["system"], f["metric"], f["flag"]) for f in comparison.flags()] == [
        ("agent", "task_completion", "regression")
    ]
    metrics = data["systems"]["agent"]["metrics"]
    tc = metrics["task_completion"]["comparisons"][0]
    deltas = {i["item_id"]: i["delta"] for i in tc["items"]}
    assert deltas == {s: (0.0 if s in UNCHANGED else -1.0) for s in SCENARIOS}
    assert tc["paired_clusters"] == len(SCENARIOS) and tc["unpaired"] == {}
    assert tc["delta"]["mean"] == pytest.approx(-10 / 12)
    ordered = [deltas[s] for s in sorted(deltas)]
    assert tc["p_value"] == pytest.approx(_exact_sign_flip_p(ordered)) == pytest.approx(2 / 2**10)
    assert tc["test"] == "exact"
    # Holm over every metric compared for this system and run, as statsmodels computes it
    names = list(metrics)
    p_values = [metrics[m]["comparisons"][0]["p_value"] for m in names]
    adjusted = multipletests(p_values, alpha=0.05, method="holm")[1]
    for name, p_holm in zip(names, adjusted, strict=True):
        assert metrics[name]["comparisons"][0]["p_holm"] == pytest.approx(p_holm)
    assert len(names) > 2 and tc["p_holm"] < 0.05
    for name in names:
        if name != "task_completion":
            assert metrics[name]["comparisons"][0]["flag"] is None, name
    # each run's mean is the run's own summary statistic
    for run in ("before", "after"):
        summary = json.loads((live[run] / "report" / "summary.json").read_text())
        stat = metrics["task_completion"]["runs"][summary["run_id"]]
        assert stat == summary["systems"]["agent"]["overall"]["task_completion"]
    assert metrics["task_completion"]["better"] == "higher"


def test_the_other_way_round_is_an_improvement(live: dict[str, Path]) -> None:
    comparison = compare_runs([live["after"], live["before"]], metrics=["task_completion"])
    assert [(f["metric"], f["flag"]) for f in comparison.flags()] == [
        ("task_completion", "improvement")
    ]
    entry = comparison.systems["agent"]["metrics"]["task_completion"]["comparisons"][0]
    # one metric: Holm leaves its p-value as it is
    assert entry["p_holm"] == entry["p_value"] == pytest.approx(2 / 2**10)


def test_three_runs_warn_on_another_seed_and_compare_each_with_the_baseline(
    live: dict[str, Path],
) -> None:
    comparison = compare_runs(
        [live["before"], live["after"], live["reseeded"]], metrics=["task_completion"]
    )
    setup, seed = comparison.warnings
    assert "system 'agent' is set up differently" in setup and "seed 4 differs" in seed
    entries = comparison.systems["agent"]["metrics"]["task_completion"]["comparisons"]
    assert [e["run"].split("-")[0] for e in entries] == ["after", "reseeded"]
    assert [e["flag"] for e in entries] == ["regression", None]
    assert entries[1]["delta"]["mean"] == 0.0 and entries[1]["p_value"] == 1.0


def test_different_suites_are_refused_naming_both_runs(live: dict[str, Path]) -> None:
    with pytest.raises(ConfigError) as error:
        compare_runs([live["before"], live["other"]])
    message = str(error.value)
    assert str(live["before"]) in message and str(live["other"]) in message
    assert "'other-calls'" in message and "'mini-calls'" in message


def test_not_a_run_and_single_run_are_refused(tmp_path: Path, live: dict[str, Path]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="not a voxeval run folder"):
        compare_runs([live["before"], tmp_path / "empty"])
    assert not any((tmp_path / "empty").iterdir())  # nothing was created there
    with pytest.raises(ConfigError, match="at least two"):
        compare_runs([live["before"]])
    with pytest.raises(ConfigError, match="the same run"):
        compare_runs([live["before"], live["before"]])


def _row(item: str, trial: int, metric: str, value: float | None, **kw: object) -> ScoreRow:
    error = None if value is not None else str(kw.pop("error", "no value"))
    return ScoreRow(item, "a", trial, "clean", "cat", metric, value, kw.pop("passed", None), error)


def test_golden_deltas_with_trials_failures_and_scores_that_did_not_run(tmp_path: Path) -> None:
    base_wer = {"x1": (0.1, 0.3), "x2": (0.2, 0.2), "x3": (0.0, 0.4), "x4": (0.5, 0.1),
                "x5": (0.3, 0.3), "x6": (0.2, 0.0)}  # fmt: skip
    after_wer = {"x1": (0.4, 0.4), "x2": (0.1, 0.5), "x3": (0.3, 0.3),
                 "x4": (1.0, 1.0),  # a system fault: the failure value, counted
                 "x5": (0.6, None)}  # fmt: skip
    base = stored_run(
        tmp_path, "base",
        [_row(i, t, "stt_wer", v) for i, vs in base_wer.items() for t, v in enumerate(vs)],
        seed=5,
    )  # fmt: skip
    after = stored_run(
        tmp_path, "after",
        [_row(i, t, "stt_wer", v) for i, vs in after_wer.items() for t, v in enumerate(vs)],
        seed=5,
        failed=[WorkUnit("x6", "a", t, "clean", "cat") for t in (0, 1)],
    )  # fmt: skip
    comparison = compare_runs([base, after])
    entry = comparison.systems["a"]["metrics"]["stt_wer"]["comparisons"][0]
    expected = {
        "x1": 0.4 - 0.2, "x2": 0.3 - 0.2, "x3": 0.3 - 0.2, "x4": 1.0 - 0.3, "x5": 0.6 - 0.3,
    }  # fmt: skip
    got = {i["item_id"]: i["delta"] for i in entry["items"]}
    assert got == pytest.approx(expected)
    assert {i["item_id"]: i["trials"] for i in entry["items"]}["x5"] == [2, 1]
    # the failed unit is not paired, and says why
    assert entry["unpaired_items"] == [
        {"item_id": "x6", "condition": "clean", "run": entry["run"],
         "reason": "failed: the unit failed on voxeval's side (simulator 2)"}
    ]  # fmt: skip
    assert entry["unpaired"] == {entry["run"]: {"failed": 1}}
    ordered = [expected[k] for k in sorted(expected)]
    assert entry["delta"]["mean"] == pytest.approx(math.fsum(ordered) / 5)
    assert entry["p_value"] == pytest.approx(_exact_sign_flip_p(ordered))
    assert entry["p_value"] == pytest.approx(2 / 32)  # all five deltas positive
    # stt_wer is better lower: a rise is bad, but 2/32 is not below alpha
    assert entry["flag"] is None and entry["significant"] is False
    units = comparison.systems["a"]["units"]
    assert units[entry["run"]]["failed_by_cause"] == {"simulator": 2}


def test_files_mark_regressions_with_colour_and_text_and_repeat_bytes(
    tmp_path: Path, live: dict[str, Path]
) -> None:
    comparison = compare_runs([live["before"], live["after"]])
    first = [p.read_bytes() for p in write_comparison(comparison, tmp_path / "one")]
    again = compare_runs([live["before"], live["after"]])
    second = [p.read_bytes() for p in write_comparison(again, tmp_path / "two")]
    assert first == second
    data = json.loads(first[0])
    assert data["flags"][0]["flag"] == "regression"
    markdown, html = first[1].decode(), first[2].decode()
    assert "▼ REGRESSION" in markdown and "| task_completion | higher |" in markdown
    assert "| s03 | clean | s03 | 1 | 0 | -1 | ▼ worse |" in markdown
    assert "<tr class='regression'><td>task_completion</td>" in html
    assert "▼ REGRESSION" in html and "tr.regression td" in html
    assert "http://" not in html and "https://" not in html  # self-contained
    for sid in sorted(set(SCENARIOS) - UNCHANGED)[:3]:
        assert f"<td>{sid}</td>" in html


def test_compare_command_writes_the_files_and_prints_the_changes(
    tmp_path: Path, live: dict[str, Path]
) -> None:
    out = tmp_path / "cmp"
    args = ["compare", str(live["before"]), str(live["after"]), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--metric", "task_completion"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "comparison.html", "comparison.json", "comparison.md"
    ]  # fmt: skip
    assert "1 regressions, 0 improvements" in result.output
    assert "task_compl" in result.output  # the table (columns may be cut to the width)
    bad = CliRunner().invoke(app, ["compare", str(live["before"]), str(live["other"])])
    assert bad.exit_code == 2 and "only runs of the same suite" in bad.output


def _single_turn_pair(tmp_path: Path) -> tuple[Path, Path]:
    rows = [_row(f"x{i}", 0, "stt_wer", 0.1 * i) for i in range(1, 5)]
    later = [_row(f"x{i}", 0, "stt_wer", 0.1 * i + 0.05) for i in range(1, 5)]
    base = stored_run(tmp_path, "base", rows, protocol="single_turn", suite_name="st")
    after = stored_run(tmp_path, "after", later, protocol="single_turn", suite_name="st")
    return base, after


def test_differing_system_and_scoring_settings_are_named(tmp_path: Path) -> None:
    base, after = _single_turn_pair(tmp_path)
    doc = yaml.safe_load((after / "run.yaml").read_text(encoding="utf-8"))
    doc["config"]["systems"][0]["voice"] = "nova"
    doc["config"]["metrics"] = ["stt_wer"]
    doc["config"]["scoring"] = {"checklist": {"scale": 5}}
    (after / "run.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    comparison = compare_runs([base, after])
    first, later = (r["run_id"] for r in comparison.runs)
    assert comparison.warnings == [
        f"{later}: system 'a' is set up differently from {first}'s (settings that differ: "
        "voice); its deltas are partly the setup's",
        f"{later}: scoring settings differ from {first}'s (metrics, scoring.checklist.scale); "
        "score deltas are partly the scorer's",
    ]


def test_single_turn_tables_say_queries(tmp_path: Path) -> None:
    from voxeval.report.leaderboard import build_leaderboard, render_markdown

    base, after = _single_turn_pair(tmp_path)
    comparison = compare_runs([base, after])
    assert compare_runs([base, after]).warnings == []
    markdown = write_comparison(comparison, tmp_path / "out")[1].read_text()
    assert "delta [95% CI over queries]" in markdown and "paired items (queries)" in markdown
    assert "querys" not in markdown
    board = render_markdown(build_leaderboard([base, after], metrics=["stt_wer"]))
    assert " queries)" in board and "querys" not in board
