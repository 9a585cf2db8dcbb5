"""A unit run away from the index (what a Ray worker does), committed by the driver: no
Ray needed. The worker's store journals index writes; nothing reaches the index until the
driver commits, and then the unit is exactly what the local executor records."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from tests.protocols.test_live_call import write_config
from voxeval.config import load_run_config
from voxeval.providers.usage.usage_meter import ModelUsage
from voxeval.runner import run_evaluation
from voxeval.runner.execute import first_items, open_context
from voxeval.runner.faults import RetryPolicy
from voxeval.runner.unit_work import (
    UnitFailedRemotely,
    UnitResult,
    apply_journal,
    commit_result,
    journal_of,
    journal_store,
    run_unit,
    worker_context,
)
from voxeval.store import RunStore


def planned_run(tmp_path: Path) -> tuple[RunStore, list, object]:
    config = load_run_config(write_config(tmp_path, trials=1, perturbations=[]))
    store = RunStore(tmp_path / "run")
    store.run_yaml.write_provenance(config)
    ctx = open_context(config, store, Console(quiet=True))
    units = first_items(list(ctx.require_protocol().plan(ctx)), 1)
    store.units.record_items(units)
    return store, units, config


def test_a_worker_unit_reaches_the_index_only_through_the_driver(tmp_path) -> None:
    store, units, config = planned_run(tmp_path)
    worker = worker_context(config, store.run_dir, Console(quiet=True))
    unit = units[0]
    (store.folder.unit_dir(unit) / "stale.txt").write_text("from a dead attempt")
    result = run_unit(worker, unit, RetryPolicy(attempts=1))
    assert not result.failed and result.scores and "task_completion" in result.scores
    assert not (store.folder.unit_dir(unit) / "stale.txt").exists()  # emptied before the attempt
    assert (store.folder.unit_dir(unit) / "events.jsonl").exists()  # artifacts: straight to disk
    # Nothing in the index yet: still planned, no usage, no scores.
    assert {u.status for u in store.units.records()} == {"planned"}
    assert store.usage.summary()["total"]["calls"] == 0
    store.recorder.start(unit)  # as the driver does when it sends the unit
    commit_result(store, unit, result)
    record = next(u for u in store.units.records() if u.key == unit.key)
    assert record.status == "done" and record.attempts == 1
    assert set(store.scores.of_unit(unit.key)) == set(result.scores)
    # A scripted call records no usage or model identity: its journal is the attempt alone
    # (the Ray single-turn test covers usage and identities travelling back).
    assert result.journal == [("start", {})]


def test_the_worker_store_refuses_index_reads_and_writes(tmp_path) -> None:
    store, units, _ = planned_run(tmp_path)
    worker_store = journal_store(store.run_dir)
    assert worker_store.run_id == store.run_id
    with pytest.raises(RuntimeError, match="only the driver"):
        worker_store.units.finished_keys()
    with pytest.raises(RuntimeError, match="only the driver"):
        worker_store.units.complete(units[0], {})
    with pytest.raises(RuntimeError, match="only the driver"):
        worker_store.run_yaml.update_extra({"x": 1})


def test_the_worker_store_is_a_whole_run_store_without_an_index(tmp_path) -> None:
    # built by RunStore's own constructor (it once skipped it and lacked parts of a store)
    store, units, _ = planned_run(tmp_path)
    worker_store = journal_store(store.run_dir)
    assert isinstance(worker_store, RunStore) and worker_store.index_url == ""
    assert worker_store.folder.unit_dir(units[0]) == store.folder.unit_dir(units[0])
    assert worker_store.run_yaml.data()["run_id"] == store.run_id  # reads run.yaml
    assert not worker_store.recorder.waits_for_commit
    with worker_store.reading_once(), pytest.raises(RuntimeError, match="only the driver"):
        worker_store.usage.summary()
    with pytest.raises(RuntimeError, match="only the driver"):
        worker_store.scores.load()
    with pytest.raises(TypeError, match="journal_store"):
        journal_of(store)  # the driver's store keeps no journal
    worker_store.close()


def test_a_failure_in_the_worker_is_recorded_by_the_driver(tmp_path) -> None:
    store, units, _ = planned_run(tmp_path)
    unit = units[0]
    failed = UnitResult(unit.key, [("start", {})], error="HarnessFault: caller", cause="caller")
    store.recorder.start(unit)
    with pytest.raises(UnitFailedRemotely) as raised:
        commit_result(store, unit, failed)
    assert raised.value.cause == "caller"


def test_local_and_worker_paths_give_the_same_scores(tmp_path) -> None:
    store, units, config = planned_run(tmp_path)
    worker = worker_context(config, store.run_dir, Console(quiet=True))
    for unit in units:
        store.recorder.start(unit)
        commit_result(store, unit, run_unit(worker, unit, RetryPolicy(attempts=1)))
    local = run_evaluation(config.model_copy(update={"limit": 1}), tmp_path / "local")
    rows = {(r.item_id, r.system, r.metric): (r.value, r.passed) for r in store.scores.load()}
    reference = RunStore(local).scores.load()
    assert rows == {(r.item_id, r.system, r.metric): (r.value, r.passed) for r in reference}


def test_usage_and_identities_are_journaled_then_applied(tmp_path) -> None:
    store, units, _ = planned_run(tmp_path)
    worker_store = journal_store(store.run_dir)
    unit = units[0]
    worker_store.recorder.start(unit)
    worker_store.recorder.record_usage(unit, "judge", 2, 10, 5, 0.25, 1, requests=3, retries=1)
    worker_store.recorder.add_model_identity("mos", {"provider": "dnsmos", "model": "sig_bak_ovr"})
    used = {("llm", "openai", "judge-model"): ModelUsage(calls=2, prompt_tokens=10, audio_in_s=1.5)}
    worker_store.recorder.record_model_usage(unit, "judge", used)
    journal = journal_of(worker_store).take_journal(unit)
    assert journal_of(worker_store).take_journal(unit) == []  # taken once
    assert store.usage.summary()["total"]["calls"] == 0
    store.recorder.start(unit)
    apply_journal(store, unit, journal)
    judge = store.usage.summary()["by_provider"]["judge"]
    assert (judge["calls"], judge["requests"], judge["retries"]) == (2, 3, 1)
    assert judge["prompt_tokens"] == 10 and judge["parse_failures"] == 1
    (row,) = store.usage.model_rows()
    assert (row["component"], row["model"], row["calls"], row["audio_in_s"]) == (
        "judge",
        "judge-model",
        2,
        1.5,
    )
    assert store.run_yaml.data()["models"]["mos"] == [
        {"provider": "dnsmos", "model": "sig_bak_ovr"}
    ]
    assert next(u for u in store.units.records() if u.key == unit.key).attempts == 1  # one attempt
