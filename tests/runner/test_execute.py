from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from tests.runner.toy_protocol import TOY_JUDGE, write_config, write_suite
from voxeval.config import load_run_config
from voxeval.protocols.contract import WorkUnit
from voxeval.runner import first_items, rescore, run_evaluation
from voxeval.store import RunStore

STAT_KEYS = {"mean", "ci_low", "ci_high", "n"}


def log_counts(path: Path, kind: str) -> Counter[str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return Counter(line.split(" ", 1)[1] for line in lines if line.startswith(kind + " "))


def make_run(tmp_path: Path, n_items: int = 6, **knobs: object) -> tuple[Path, Path]:
    log = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=n_items, log=str(log), **knobs)
    return write_config(tmp_path / "cfg.yaml", suite, trials=2, conditions=["clean", "noisy"]), log


def test_full_run_writes_report_with_standard_shape(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path)
    run_dir = run_evaluation(load_run_config(config_path), tmp_path / "run")
    assert sum(log_counts(log, "interact").values()) == 6 * 2 * 2
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    echo = summary["systems"]["echo"]
    assert set(echo["overall"]["length"]) >= STAT_KEYS
    assert echo["overall"]["length"]["n"] == 24
    assert set(echo["by_category"]) == {"even", "odd"}
    assert set(echo["by_condition"]) == {"clean", "noisy"}
    assert echo["by_condition"]["clean"]["length"]["n"] == 12
    assert echo["not_run"]["judge"].startswith("no judge configured")
    assert echo["units"] == {
        "done": 24,
        "failed": 0,
        "pending": 0,
        "system_faults": {},
        "failed_by_cause": {},
        "pending_metrics": 0,
    }
    assert summary["usage"]["total"]["calls"] == 48
    assert summary["usage"]["total"]["parse_failures"] == 24
    stat = echo["overall"]["length"]
    assert stat["ci_low"] <= stat["mean"] <= stat["ci_high"]
    md = (run_dir / "report" / "summary.md").read_text()
    assert "| length |" in md and "no judge configured" in md
    csv_lines = (run_dir / "report" / "scores.csv").read_text().splitlines()
    assert csv_lines[0].startswith(
        "item_id,query_id,profile,engine,noise_category,system,trial,condition,category,metric"
    )
    assert len(csv_lines) == 1 + 24 * 2


def test_resume_after_interrupt_does_not_redo_finished_units(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path, interrupt_item="q03")
    config = load_run_config(config_path).model_copy(update={"concurrency": 1})
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(config, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    done_before = store.units.finished_keys()
    assert 0 < len(done_before) < 24
    Path(f"{log}.heal").touch()
    run_evaluation(config, tmp_path / "run")
    counts = log_counts(log, "interact")
    assert all(counts[key] == 1 for key in done_before)
    assert len(RunStore(tmp_path / "run").units.finished_keys()) == 24


def test_failed_units_are_recorded_and_retried_on_resume(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path, fail_items=["q01"])
    run_dir = run_evaluation(load_run_config(config_path), tmp_path / "run")
    store = RunStore(run_dir)
    failed = store.units.records("failed")
    assert len(failed) == 4 and all("toy failure on q01" in (u.error or "") for u in failed)
    unit = WorkUnit(failed[0].item_id, failed[0].system, failed[0].trial, failed[0].condition)
    assert "RuntimeError" in (store.folder.unit_dir(unit) / "error.txt").read_text()
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert summary["systems"]["echo"]["units"]["failed"] == 4
    Path(f"{log}.heal").touch()
    run_evaluation(load_run_config(config_path), run_dir)
    counts = log_counts(log, "interact")
    assert {k: v for k, v in counts.items() if v > 1} == {u.key: 2 for u in failed}
    assert store.units.records("failed") == []


def test_limit_keeps_first_items(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path)
    run_evaluation(load_run_config(config_path), tmp_path / "run", limit=2)
    items = {key.split("|")[0] for key in log_counts(log, "interact")}
    assert items == {"q00", "q01"}
    units = [WorkUnit(i, "s", t) for i in ("a", "b", "a", "c") for t in (0,)]
    assert [u.item_id for u in first_items(units, 2)] == ["a", "b", "a"]


def test_rescore_never_calls_interact(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path)
    run_dir = run_evaluation(load_run_config(config_path), tmp_path / "run")
    interacts = sum(log_counts(log, "interact").values())
    rescore(run_dir, ["parity"])
    assert sum(log_counts(log, "interact").values()) == interacts
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    overall = summary["systems"]["echo"]["overall"]
    assert overall["parity"]["mean"] == pytest.approx(0.5)  # q00..q05: half odd
    assert "length" in overall  # earlier metrics are kept
    scores = json.loads((run_dir / "items" / "q01" / "echo" / "0" / "scores.json").read_text())
    assert scores["parity"]["value"] == 1.0 and scores["length"]["value"] == 4.0
    extra = yaml.safe_load((run_dir / "run.yaml").read_text())["extra"]
    assert extra["rescored"][0]["metrics"] == ["parity"]


def test_rescore_with_a_new_judge(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path, n_items=2)
    run_dir = run_evaluation(load_run_config(config_path), tmp_path / "run")
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert "judge" in summary["systems"]["echo"]["not_run"]
    rescore(run_dir, ["judge"], overrides={"judge": TOY_JUDGE})
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert summary["systems"]["echo"]["overall"]["judge"]["mean"] == 7.0
    assert summary["systems"]["echo"]["not_run"] == {}
    assert sum(log_counts(log, "interact").values()) == 8
    extra = yaml.safe_load((run_dir / "run.yaml").read_text())["extra"]
    assert extra["rescored"][-1]["overrides"] == {"judge": TOY_JUDGE}


def test_resume_with_changed_config_warns(tmp_path: Path) -> None:
    config_path, _ = make_run(tmp_path, n_items=2)
    config = load_run_config(config_path)
    run_evaluation(config, tmp_path / "run")
    console = Console(file=io.StringIO(), width=300)
    changed = config.model_copy(update={"seed": 9, "concurrency": 1})
    run_evaluation(changed, tmp_path / "run", console=console)
    assert "differs in seed;" in console.file.getvalue()  # type: ignore[attr-defined]


def test_no_resume_starts_over(tmp_path: Path) -> None:
    config_path, log = make_run(tmp_path, n_items=2)
    run_evaluation(load_run_config(config_path), tmp_path / "run")
    run_evaluation(load_run_config(config_path), tmp_path / "run")  # nothing left to do
    assert sum(log_counts(log, "interact").values()) == 8
    run_evaluation(load_run_config(config_path), tmp_path / "run", resume=False)
    assert sum(log_counts(log, "interact").values()) == 16


def test_secrets_never_reach_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOY_JUDGE_API_KEY", "sk-toy-secret-value-123")
    suite = write_suite(tmp_path / "suite", n_items=2)
    config_path = write_config(
        tmp_path / "cfg.yaml",
        suite,
        judge={
            "provider": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "api_key_env": "TOY_JUDGE_API_KEY",
        },
    )
    run_dir = run_evaluation(load_run_config(config_path), tmp_path / "run")
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert b"sk-toy-secret-value-123" not in path.read_bytes(), path
    assert "TOY_JUDGE_API_KEY" in (run_dir / "run.yaml").read_text()
