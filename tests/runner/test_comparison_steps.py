"""Comparison steps across systems in the runner: they run after the units are scored, are
stored once per comparison (index row + file), resume exactly once, stay pending while an
input score is pending, are "not run" while an input unit failed on our side, are never
replaced by a worse result, and count in the exit code and summary."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import text
from typer.testing import CliRunner

from tests.runner.toy_protocol import (
    TOY_JUDGE,
    ToyProtocol,
    healed,
    log,
    suite_data,
    write_suite,
)
from voxeval.api.context import RunContext
from voxeval.cli.main import app
from voxeval.config import RunConfig, load_run_config
from voxeval.errors import ConfigError
from voxeval.protocols.comparison import Comparison
from voxeval.protocols.contract import WorkUnit
from voxeval.registry import register
from voxeval.runner import rescore, run_evaluation, run_health
from voxeval.runner.execute import rescore_run
from voxeval.runner.plan_check import validate_plan
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.store import RunStore

STEP = "versus"


@register("protocol", "toy-compare")
class ComparingToy(ToyProtocol):
    """The toy protocol plus a ``versus`` step: each pair of systems on each cell, A's length
    minus B's. Suite knob ``interrupt_compare: KEY`` raises KeyboardInterrupt on that
    comparison until healed; every compare call and each completed one are logged."""

    name = "toy-compare"
    comparison_steps = (STEP,)

    def default_comparisons(self, config: RunConfig) -> list[str]:
        return [STEP] if len(config.systems) >= 2 else []

    def check_comparisons(self, config: RunConfig, steps: Sequence[str]) -> list[str]:
        return [] if len(config.systems) >= 2 else [f"{STEP} needs two systems"]

    def comparisons(
        self, ctx: RunContext, steps: Sequence[str], units: Sequence[WorkUnit]
    ) -> list[Comparison]:
        cells: dict[tuple[str, str, int], dict[str, WorkUnit]] = {}
        for unit in units:
            cells.setdefault((unit.item_id, unit.condition, unit.trial), {})[unit.system] = unit
        names = [s.name for s in ctx.config.systems]
        out = []
        for (item, condition, trial), by_system in cells.items():
            a, b = (by_system[n] for n in names[:2])
            out.append(Comparison(STEP, f"{item}|{condition}|{trial}", (a, b)))
        return out

    def compare(self, comparison: Comparison, ctx: RunContext) -> ComparisonResult:
        log(ctx, f"compare {comparison.key}")
        if comparison.key == suite_data(ctx).get("interrupt_compare") and not healed(ctx):
            raise KeyboardInterrupt
        a, b = (ctx.store.scores.of_unit(u.key) for u in comparison.units)
        if a["judge"].pending or b["judge"].pending:
            return ComparisonResult.pending_retry("input score pending: judge")
        log(ctx, f"compared {comparison.key}")
        diff = float(a["length"].value or 0) - float(b["length"].value or 0)
        return ComparisonResult.done({"length_diff": diff, "api_key": "sk-should-not-leak"})

    def summarize_comparisons(self, ctx: RunContext) -> dict[str, Any]:
        return {STEP: {"stored": len(ctx.store.comparisons.records(STEP))}}


def setup(tmp_path: Path, n_items: int = 3, **knobs: Any) -> tuple[RunConfig, Path, Path]:
    log_path = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=n_items, log=str(log_path), **knobs)
    data = yaml.safe_load(suite.read_text())
    suite.write_text(yaml.safe_dump({**data, "protocol": "toy-compare"}))
    config = tmp_path / "cfg.yaml"
    systems = [{"name": "echo", "type": "toy"}, {"name": "other", "type": "toy"}]
    config.write_text(yaml.safe_dump({"suite": str(suite), "systems": systems, "judge": TOY_JUDGE}))
    return load_run_config(config), config, log_path


def counts(log_path: Path, kind: str) -> Counter[str]:
    lines = log_path.read_text().splitlines() if log_path.exists() else []
    return Counter(line.split(" ", 1)[1] for line in lines if line.startswith(kind + " "))


def keys(n_items: int) -> set[str]:
    return {f"q{i:02d}|clean|0" for i in range(n_items)}


def rows(run_dir: Path) -> list[tuple[str, str]]:
    store = RunStore(run_dir)
    with store.index.read() as conn:
        found = conn.execute(text("SELECT step, comparison_key FROM comparisons")).all()
    store.close()
    return [(str(step), str(key)) for step, key in found]


def test_comparisons_run_after_the_units_and_are_stored_once(tmp_path: Path) -> None:
    config, _, log_path = setup(tmp_path)
    run_dir = run_evaluation(config, tmp_path / "run")
    assert set(counts(log_path, "compared")) == keys(3)
    assert sorted(rows(run_dir)) == sorted((STEP, k) for k in keys(3))
    store = RunStore(run_dir)
    records = {r.key: r for r in store.comparisons.records()}
    q0 = records["q00|clean|0"]
    assert q0.status == "done" and q0.unit_keys == ("q00|clean|echo|0", "q00|clean|other|0")
    assert q0.result["length_diff"] == 0.0  # both systems echo the same text
    assert q0.result["api_key"] != "sk-should-not-leak"  # secrets redacted in the index
    stored_file = json.loads(store.comparisons.path(STEP, "q00|clean|0").read_text())
    assert stored_file["status"] == "done" and stored_file["units"] == list(q0.unit_keys)
    assert "sk-should-not-leak" not in json.dumps(stored_file)
    assert store.comparisons.path(STEP, "q00|clean|0").parent == run_dir / "comparisons" / STEP
    assert run_health(store).exit_code() == 0
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert summary["comparisons"] == {STEP: {"done": 3, "pending": 0, "failed": 0, "not_run": 0}}
    assert summary[STEP] == {"stored": 3}
    assert (
        "Comparisons across systems: versus: done 3."
        in (run_dir / "report" / "summary.md").read_text()
    )


def test_a_run_stopped_after_unit_scoring_completes_each_comparison_exactly_once(
    tmp_path: Path,
) -> None:
    config, _, log_path = setup(tmp_path, n_items=4, interrupt_compare="q02|clean|0")
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(config, tmp_path / "run")
    interacted = counts(log_path, "interact")
    assert sum(interacted.values()) == 8  # every unit was scored before the comparisons
    first = set(counts(log_path, "compared"))
    assert "q02|clean|0" not in first
    (tmp_path / "log.txt.heal").touch()
    run_dir = run_evaluation(config, tmp_path / "run")
    assert counts(log_path, "interact") == interacted  # no unit ran again
    assert set(counts(log_path, "compared")) == keys(4)
    assert all(n == 1 for n in counts(log_path, "compared").values())  # exactly once each
    assert sorted(rows(run_dir)) == sorted((STEP, k) for k in keys(4))  # no duplicate rows
    calls = sum(counts(log_path, "compare").values())
    run_evaluation(config, tmp_path / "run")  # all done: nothing compared again
    assert sum(counts(log_path, "compare").values()) == calls
    assert len(rows(run_dir)) == 4


def test_a_unit_failed_on_our_side_leaves_its_comparisons_not_run(tmp_path: Path) -> None:
    config, _, _ = setup(tmp_path, fail_items=["q01"])
    run_dir = run_evaluation(config, tmp_path / "run")
    store = RunStore(run_dir)
    records = {r.key: r for r in store.comparisons.records()}
    assert records["q01|clean|0"].status == "not_run"
    assert records["q01|clean|0"].cause == "unit_failed:internal"
    assert "q01|clean|echo|0 failed on voxeval's side" in str(records["q01|clean|0"].error)
    assert records["q00|clean|0"].status == "done"
    health = run_health(store)
    assert health.comparisons_not_done == {STEP: {"not_run": 1}}
    assert health.exit_code() == 1
    (tmp_path / "log.txt.heal").touch()
    run_evaluation(config, tmp_path / "run")
    assert {r.status for r in store.comparisons.records()} == {"done"}
    assert run_health(store).exit_code() == 0


def test_a_system_fault_is_an_input_like_any_other(tmp_path: Path) -> None:
    config, _, _ = setup(tmp_path, system_faults={"q00": "timeout"})
    run_dir = run_evaluation(config, tmp_path / "run")
    records = {r.key: r for r in RunStore(run_dir).comparisons.records()}
    assert records["q00|clean|0"].status == "done"  # both systems failed: scored 0 each


def test_a_pending_input_score_keeps_the_comparison_pending_until_score(tmp_path: Path) -> None:
    config, _, log_path = setup(tmp_path, judge_down=True)
    run_dir = run_evaluation(config, tmp_path / "run")
    store = RunStore(run_dir)
    assert {r.status for r in store.comparisons.records()} == {"pending"}
    health = run_health(store)
    assert health.comparisons_not_done == {STEP: {"pending": 3}} and health.exit_code() == 1
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert summary["comparisons"][STEP]["pending"] == 3
    (tmp_path / "log.txt.heal").touch()
    _, outcome = rescore_run(run_dir)
    assert {r.status for r in store.comparisons.records()} == {"done"}
    assert outcome.kept == 0 and run_health(store).exit_code() == 0
    assert set(counts(log_path, "compared")) == keys(3)


def test_a_done_comparison_is_never_replaced_by_a_pending_one(tmp_path: Path) -> None:
    config, _, _ = setup(tmp_path)
    run_dir = run_evaluation(config, tmp_path / "run")
    before = {r.key: r.result for r in RunStore(run_dir).comparisons.records()}
    data = yaml.safe_load((tmp_path / "suite" / "suite.yaml").read_text())
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump({**data, "judge_down": True}))
    _, outcome = rescore_run(run_dir)  # recomputes every comparison: its inputs are pending
    store = RunStore(run_dir)
    assert outcome.kept >= 3  # the comparisons (and the judge scores) kept
    assert {r.key: r.result for r in store.comparisons.records()} == before
    assert {r.status for r in store.comparisons.records()} == {"done"}


def test_score_recomputes_done_comparisons(tmp_path: Path) -> None:
    config, _, log_path = setup(tmp_path)
    run_dir = run_evaluation(config, tmp_path / "run")
    rescore(run_dir)
    assert all(n == 2 for n in counts(log_path, "compared").values())
    assert len(rows(run_dir)) == 3


def test_an_unknown_step_is_a_config_error_naming_the_field(tmp_path: Path) -> None:
    _, path, _ = setup(tmp_path)
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "comparisons": ["arena"]}))
    with pytest.raises(ConfigError, match=r"comparisons: unknown comparison step 'arena'"):
        validate_plan(load_run_config(path))
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "known: versus" in result.output
    assert not (tmp_path / "run").exists()  # nothing was run


def test_a_step_the_protocol_rejects_for_this_config_is_a_config_error(tmp_path: Path) -> None:
    _, path, _ = setup(tmp_path)
    data = yaml.safe_load(path.read_text())
    one_system = {**data, "systems": data["systems"][:1], "comparisons": [STEP]}
    path.write_text(yaml.safe_dump(one_system))
    with pytest.raises(ConfigError, match="comparisons: versus needs two systems"):
        validate_plan(load_run_config(path))


def test_a_protocol_without_comparisons_runs_unchanged_and_rejects_steps(tmp_path: Path) -> None:
    log_path = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=2, log=str(log_path))
    path = tmp_path / "cfg.yaml"
    systems = [{"name": "echo", "type": "toy"}, {"name": "other", "type": "toy"}]
    path.write_text(yaml.safe_dump({"suite": str(suite), "systems": systems}))
    run_dir = run_evaluation(load_run_config(path), tmp_path / "run")
    assert rows(run_dir) == []
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert summary["comparisons"] == {}
    path.write_text(yaml.safe_dump({"suite": str(suite), "systems": systems, "comparisons": ["x"]}))
    with pytest.raises(ConfigError, match="for the toy protocol; known: none"):
        validate_plan(load_run_config(path))


def test_comparisons_can_be_switched_off(tmp_path: Path) -> None:
    _, path, log_path = setup(tmp_path)
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "comparisons": []}))
    run_dir = run_evaluation(load_run_config(path), tmp_path / "run")
    assert rows(run_dir) == [] and not counts(log_path, "compare")


def test_an_old_index_gets_the_comparisons_table_in_place(tmp_path: Path) -> None:
    config, _, _ = setup(tmp_path)
    run_dir = run_evaluation(config, tmp_path / "run")
    store = RunStore(run_dir)
    with store.index.write() as conn:
        # an index written before comparisons, and before its schema carried a version
        conn.execute(text("DROP TABLE comparisons"))
        conn.execute(text("DROP TABLE voxeval_index_version"))
    store.close()
    run_evaluation(config, tmp_path / "run")  # resumes: creates the table, compares
    assert len(rows(run_dir)) == 3


def test_no_resume_forgets_comparisons(tmp_path: Path) -> None:
    config, _, log_path = setup(tmp_path)
    run_dir = run_evaluation(config, tmp_path / "run")
    (run_dir / "comparisons" / STEP / "stale.json").write_text("{}")
    run_evaluation(config, tmp_path / "run", resume=False)
    assert len(rows(run_dir)) == 3
    assert not (run_dir / "comparisons" / STEP / "stale.json").exists()
    assert all(n == 2 for n in counts(log_path, "compared").values())
