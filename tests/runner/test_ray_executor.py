"""``voxeval run --executor ray`` on a local 2-CPU Ray cluster: the same scores as the local
executor with the same seed, no finished unit lost when workers are killed mid-unit, and a
clear message when Ray is missing.

The cluster is started once for the module; every service is a loopback server of this
process (the workers reach it on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.protocols.test_live_call import write_config as write_live_call_config
from tests.runner.executor_world import (
    N_QUERIES,
    World,
    assert_resume_runs_only_the_failed,
    assert_same_results,
    index_rows,
    run_cli,
    single_turn_config,
)
from voxeval.runner.ray_limits import NAMESPACE


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_single_turn_run_on_ray_equals_the_local_run(
    ray_cluster, world, local_run, tmp_path
) -> None:
    server, _ = world
    started = time.perf_counter()
    config = single_turn_config(tmp_path, server.url)
    remote = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert remote.exit_code == 0, remote.output
    print(f"ray run of {N_QUERIES} single-turn units: {time.perf_counter() - started:.1f} s")
    assert "ray: " in remote.output and "workers" in remote.output
    assert_same_results(local_run, tmp_path / "ray")
    summary = json.loads((tmp_path / "ray" / "report" / "summary.json").read_text())
    overall = summary["systems"]["live"]["overall"]
    assert overall["assertions"]["mean"] == 1.0 and overall["wer"]["mean"] == 0.0
    assert overall["duration"]["n"] == N_QUERIES
    # Usage and identities reached the index and run.yaml through the driver.
    usage = [index_rows(d, "SELECT provider, SUM(calls), SUM(requests) FROM usage GROUP BY 1")
             for d in (local_run, tmp_path / "ray")]  # fmt: skip
    assert usage[0] == usage[1] and usage[0]
    assert index_rows(tmp_path / "ray", "SELECT DISTINCT status, attempts FROM units") == [
        ("done", 1)
    ]
    models = yaml.safe_load((tmp_path / "ray" / "run.yaml").read_text())["models"]
    assert "system" in models and "mos" in models


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_live_call_run_on_ray_equals_the_local_run(ray_cluster, tmp_path) -> None:
    config = write_live_call_config(tmp_path)
    local = run_cli(config, tmp_path / "local")
    assert local.exit_code == 0, local.output
    remote = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert remote.exit_code == 0, remote.output
    assert_same_results(tmp_path / "local", tmp_path / "ray")
    assert len(list((tmp_path / "ray").rglob("call.json"))) == 16
    for events in (tmp_path / "ray").rglob("events.jsonl"):  # the recordings are identical too
        twin = tmp_path / "local" / events.relative_to(tmp_path / "ray")
        assert events.read_bytes() == twin.read_bytes(), events


def kill_workers_at(ray: Any, world: World, out: Path, nth: int) -> dict[str, Any]:
    """On the ``nth`` system request, kill every worker of the run (mid-unit: the request is
    answered only after the kill) and note the units the index had finished by then."""
    seen: dict[str, Any] = {}

    def on_reply(query: int, count: int) -> None:
        if count != nth:
            return
        run_id = yaml.safe_load((out / "run.yaml").read_text())["run_id"]
        names = [
            entry["name"]
            for entry in ray.util.list_named_actors(all_namespaces=True)
            if entry["name"].startswith(f"{run_id}/worker/")
        ]
        for name in names:
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=False)
        seen["killed"] = len(names)
        seen["done"] = {row[0] for row in index_rows(out, "SELECT unit_key FROM units "
                                                     "WHERE status = 'done'")}  # fmt: skip
        time.sleep(1.5)  # the worker is dead before it could read this answer

    world.on_reply = on_reply
    return seen


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_killed_workers_lose_no_finished_unit(ray_cluster, local_run, fresh_world, tmp_path):
    server, responder = fresh_world
    config = single_turn_config(tmp_path, server.url)
    seen = kill_workers_at(ray_cluster, responder, tmp_path / "ray", nth=3)
    result = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert result.exit_code == 0, result.output
    assert seen["killed"] == 2 and len(seen["done"]) >= 1
    assert_same_results(local_run, tmp_path / "ray", usage=False)
    # Units finished before the kill were never sent again; the killed ones ran twice.
    done_queries = {int(re.match(r"q(\d+)__", key).group(1)) for key in seen["done"]}
    assert all(responder.replies[q] == 1 for q in done_queries)
    rerun = sum(n - 1 for n in responder.replies.values())
    assert 1 <= rerun <= 2  # the units in flight on the two killed workers
    assert not list((tmp_path / "ray").rglob("error.txt"))
    # Ray re-ran them on restarted workers: each such unit shows both attempts
    attempts = index_rows(tmp_path / "ray", "SELECT attempts, COUNT(*) FROM units GROUP BY 1")
    assert dict(attempts).get(2, 0) >= 1 and max(dict(attempts)) == 2, attempts
    assert not list((tmp_path / "ray").rglob("dispatch.txt"))  # no marker left behind
    # Issue 37, point 13: the requests the killed attempts had sent count in the usage, as
    # rows of 0 calls (the calls never finished) of the units re-run, as with processes
    assert not list((tmp_path / "ray").rglob("sent_requests.log"))
    received = sum(responder.replies.values())
    summary = json.loads((tmp_path / "ray" / "report" / "summary.json").read_text())
    system = summary["usage"]["by_provider"]["system:live"]
    assert (system["calls"], system["requests"]) == (N_QUERIES, received)
    lost = index_rows(tmp_path / "ray", "SELECT u.unit_key, u.requests, n.attempts FROM usage u "
                      "JOIN units n ON n.unit_key = u.unit_key "
                      "WHERE u.provider = 'system:live' AND u.calls = 0")  # fmt: skip
    assert sum(requests for _, requests, _ in lost) == rerun
    assert {attempts for _, _, attempts in lost} == {2}


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_a_unit_whose_worker_died_is_failed_then_resumed(
    ray_cluster, local_run, fresh_world, tmp_path
) -> None:
    server, responder = fresh_world
    config = single_turn_config(tmp_path, server.url, ray={"max_retries": 0})
    seen = kill_workers_at(ray_cluster, responder, tmp_path / "ray", nth=2)
    first = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert first.exit_code == 1, first.output  # units failed on our side
    failed = index_rows(tmp_path / "ray", "SELECT unit_key, cause FROM units "
                        "WHERE status = 'failed'")  # fmt: skip
    assert failed and {cause for _, cause in failed} == {"worker"}
    assert seen["done"] <= {
        key for (key,) in index_rows(tmp_path / "ray", "SELECT unit_key FROM units "
                                     "WHERE status = 'done'")
    }  # fmt: skip
    assert_resume_runs_only_the_failed(
        responder, config, tmp_path / "ray", "ray", len(failed), local_run
    )


def test_ray_executor_without_ray_names_the_extra(tmp_path, monkeypatch) -> None:
    config = write_live_call_config(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    result = run_cli(config, tmp_path / "run", "--executor", "ray")
    assert result.exit_code == 2, result.output
    assert "voxeval[scale]" in result.output and "executor" in result.output
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_address_needs_the_ray_executor(tmp_path) -> None:
    result = run_cli(write_live_call_config(tmp_path), tmp_path / "run", "--address", "auto")
    assert result.exit_code == 2 and "--executor ray" in result.output


@pytest.mark.slow  # a PostgreSQL cluster and Ray workers
def test_ray_run_with_a_postgresql_index(ray_cluster, postgres_url, tmp_path) -> None:
    """Workers never open the index, so a PostgreSQL index by URL works as SQLite does."""
    from voxeval.config import load_run_config
    from voxeval.runner import run_evaluation
    from voxeval.store import RunStore

    config = write_live_call_config(tmp_path)
    assert run_cli(config, tmp_path / "local").exit_code == 0
    remote = load_run_config(config).model_copy(update={"executor": "ray"})
    run_dir = run_evaluation(remote, tmp_path / "ray", index_url=postgres_url)
    assert not (run_dir / "index.sqlite").exists()
    store = RunStore(run_dir, index_url=postgres_url)
    try:
        assert len(store.units.finished_keys()) == 16
    finally:
        store.close()
    assert (tmp_path / "local" / "report" / "scores.csv").read_text() == (
        run_dir / "report" / "scores.csv"
    ).read_text()
