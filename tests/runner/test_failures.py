"""Faults during a run: our side's are retried then failed with a cause, the system's are
scored, pending scores are retried without calling the system, and exit codes say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.runner.test_execute import log_counts
from tests.runner.toy_protocol import TOY_JUDGE, write_config, write_suite
from voxeval.cli.main import app
from voxeval.config import load_run_config
from voxeval.runner import RetryPolicy, run_evaluation, run_health
from voxeval.runner.execute import rescore_run
from voxeval.store import RunStore

NO_WAIT = RetryPolicy(attempts=3, backoff_s=0.0)


def toy_run(tmp_path: Path, n_items: int = 6, **knobs: object) -> tuple[Path, Path]:
    """A config of ``n_items`` toy items (1 trial, clean only: one unit per item)."""
    log = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=n_items, log=str(log), **knobs)
    return write_config(tmp_path / "cfg.yaml", suite, judge=TOY_JUDGE), log


def summary_of(run_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((run_dir / "report" / "summary.json").read_text())


def test_harness_fault_is_retried_with_backoff_then_succeeds(tmp_path: Path) -> None:
    config, log = toy_run(tmp_path, harness_faults={"q01": 2})
    sleeps: list[float] = []
    retry = RetryPolicy(attempts=3, backoff_s=0.5)
    run_dir = run_evaluation(
        load_run_config(config), tmp_path / "run", retry=retry, sleep=sleeps.append
    )
    assert log_counts(log, "interact")["q01|clean|echo|0"] == 3
    assert sleeps == [0.5, 1.0]  # doubling back-off between the three attempts
    store = RunStore(run_dir)
    assert len(store.units.finished_keys()) == 6
    assert store.units.records()[1].attempts == 3
    assert run_health(store).exit_code() == 0


def test_persistent_harness_fault_fails_the_unit_with_its_cause(tmp_path: Path) -> None:
    config, log = toy_run(tmp_path, harness_faults={"q01": 99, "q04": 99})
    run_dir = run_evaluation(load_run_config(config), tmp_path / "run", retry=NO_WAIT)
    assert log_counts(log, "interact")["q01|clean|echo|0"] == 3  # tried, then given up
    store = RunStore(run_dir)
    failed = store.units.records("failed")
    assert [(u.item_id, u.cause) for u in failed] == [("q01", "simulator"), ("q04", "simulator")]
    assert "HarnessFault: toy caller broke on q01" in (failed[0].error or "")
    echo = summary_of(run_dir)["systems"]["echo"]
    assert echo["units"]["failed"] == 2
    assert echo["units"]["failed_by_cause"] == {"simulator": 2}
    assert echo["overall"]["length"]["n"] == 4  # excluded from the means...
    markdown = (run_dir / "report" / "summary.md").read_text()
    # ... with a visible warning
    assert "**Warning:** 2 units failed on voxeval's side (simulator 2)" in markdown
    health = run_health(store)
    assert health.failed_units == 2 and health.exit_code() == 1


def test_other_errors_fail_at_once_without_retries(tmp_path: Path) -> None:
    config, log = toy_run(tmp_path, fail_items=["q02"])
    run_dir = run_evaluation(load_run_config(config), tmp_path / "run", retry=NO_WAIT)
    assert log_counts(log, "interact")["q02|clean|echo|0"] == 1  # a bug is not retried
    assert [u.cause for u in RunStore(run_dir).units.records("failed")] == ["internal"]


def test_system_fault_is_scored_and_counted_per_cause(tmp_path: Path) -> None:
    config, _ = toy_run(tmp_path, system_faults={"q01": "timeout", "q03": "disconnect"})
    run_dir = run_evaluation(load_run_config(config), tmp_path / "run")
    store = RunStore(run_dir)
    units = {u.item_id: u for u in store.units.records()}
    assert all(u.status == "done" for u in units.values())
    assert (units["q01"].system_fault, units["q03"].system_fault) == ("timeout", "disconnect")
    assert "toy system failed on q01" in (units["q01"].error or "")
    echo = summary_of(run_dir)["systems"]["echo"]
    assert echo["units"]["system_faults"] == {"disconnect": 1, "timeout": 1}
    assert echo["units"]["failed"] == 0
    assert echo["overall"]["length"]["n"] == 6  # the failures are in the mean, as zeros
    summary = summary_of(run_dir)
    assert summary["units"]["system_faults"] == {"disconnect": 1, "timeout": 1}
    assert (
        "**Note:** 2 units are failures of the system under test"
        in (run_dir / "report" / "summary.md").read_text()
    )
    health = run_health(store)
    assert health.exit_code() == 1 and health.exit_code(max_failures=2) == 0


def test_pending_scores_are_retried_by_the_next_run_without_calling_the_system(
    tmp_path: Path,
) -> None:
    config, log = toy_run(tmp_path, judge_down=True)
    run_dir = run_evaluation(load_run_config(config), tmp_path / "run")
    store = RunStore(run_dir)
    assert len(store.units.finished_keys()) == 6  # done: the system's part is finished
    assert store.scores.pending_metrics() == {f"q0{i}|clean|echo|0": ["judge"] for i in range(6)}
    scores = json.loads((run_dir / "items" / "q00" / "echo" / "0" / "scores.json").read_text())
    assert scores["judge"]["pending"] is True and scores["judge"]["value"] is None
    assert summary_of(run_dir)["systems"]["echo"]["units"]["pending_metrics"] == 6
    assert run_health(store).exit_code() == 1

    Path(f"{log}.heal").touch()  # the judge is back
    interacts = sum(log_counts(log, "interact").values())
    scored_before = log_counts(log, "score")
    run_evaluation(load_run_config(config), tmp_path / "run")
    assert sum(log_counts(log, "interact").values()) == interacts  # no system call
    assert sum(log_counts(log, "score").values()) == sum(scored_before.values()) + 6
    echo = summary_of(run_dir)["systems"]["echo"]
    assert echo["overall"]["judge"] == {**echo["overall"]["judge"], "mean": 7.0, "n": 6}
    assert echo["units"]["pending_metrics"] == 0
    assert RunStore(run_dir).scores.pending_metrics() == {}
    assert run_health(RunStore(run_dir)).exit_code() == 0


def test_rescore_with_a_failing_judge_keeps_good_scores(tmp_path: Path) -> None:
    config, _ = toy_run(tmp_path)
    run_dir = run_evaluation(load_run_config(config), tmp_path / "run")
    suite = tmp_path / "suite" / "suite.yaml"
    data = yaml.safe_load(suite.read_text())
    suite.write_text(yaml.safe_dump({**data, "judge_down": True}))  # the judge fails now
    _, outcome = rescore_run(run_dir, ["judge", "parity"])
    assert outcome.kept == 6
    scores = json.loads((run_dir / "items" / "q00" / "echo" / "0" / "scores.json").read_text())
    assert scores["judge"]["value"] == 7.0 and not scores["judge"]["pending"]
    assert scores["parity"]["value"] == 0.0  # metrics that ran are replaced as usual
    echo = summary_of(run_dir)["systems"]["echo"]
    assert echo["overall"]["judge"]["mean"] == 7.0 and echo["overall"]["judge"]["n"] == 6
    extra = yaml.safe_load((run_dir / "run.yaml").read_text())["extra"]
    assert extra["rescored"][-1]["kept_stored_values"] == 6


cli = CliRunner()


def test_exit_codes_and_failure_listing(tmp_path: Path) -> None:
    config, _ = toy_run(tmp_path, system_faults={"q01": "exception"})
    out = tmp_path / "run"
    result = cli.invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 1, result.output  # default --max-failures 0
    assert "system faults: 1 units scored as failures" in result.output
    result = cli.invoke(app, ["run", str(config), "--out", str(out), "--max-failures", "1"])
    assert result.exit_code == 0, result.output
    assert cli.invoke(app, ["report", str(out)]).exit_code == 1
    assert cli.invoke(app, ["report", str(out), "--max-failures", "1"]).exit_code == 0


def test_failed_units_give_exit_1_and_are_listed_by_cause(tmp_path: Path) -> None:
    config, log = toy_run(tmp_path, harness_faults={"q02": 99})
    out = tmp_path / "run"
    args = ["run", str(config), "--out", str(out), "--retries", "1", "--retry-backoff", "0"]
    result = cli.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "failed (simulator): 1 units" in result.output
    assert "q02|clean|echo|0: HarnessFault: toy caller broke on q02" in result.output
    assert log_counts(log, "interact")["q02|clean|echo|0"] == 2  # --retries 1


def test_pending_scores_give_exit_1_for_run_and_score(tmp_path: Path) -> None:
    config, log = toy_run(tmp_path, judge_down=True)
    out = tmp_path / "run"
    result = cli.invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "pending: 6 scores" in result.output
    assert cli.invoke(app, ["score", str(out), "--metrics", "parity"]).exit_code == 1
    Path(f"{log}.heal").touch()
    result = cli.invoke(app, ["score", str(out), "--metrics", "parity"])
    assert result.exit_code == 0, result.output  # the pending judge scores were retried too
    assert RunStore(out).scores.pending_metrics() == {}


@pytest.mark.parametrize("attempts", [0, -1])
def test_retry_policy_is_validated(attempts: int) -> None:
    from voxeval.errors import ConfigError

    with pytest.raises(ConfigError):
        RetryPolicy(attempts=attempts)
