"""``voxeval run --executor processes``: worker processes of this machine give the same scores
as the local executor with the same seed, a killed worker loses no finished unit (its units in
flight run again on a replacement), provider limits hold across workers, and a worker that
cannot start is named. Every service is a loopback server of this process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.protocols.test_live_call import write_config as write_live_call_config
from tests.runner.executor_world import (
    N_QUERIES,
    World,
    assert_resume_runs_only_the_failed,
    assert_same_results,
    index_rows,
    run_cli,
    single_turn_config,
    tone,
)
from voxeval.audio import audio_to_wav_bytes
from voxeval.config import parse_run_config
from voxeval.errors import ConfigError
from voxeval.runner.process_executor import (
    WorkerProcess,
    await_ready,
    process_shape,
    worker_processes_context,
)
from voxeval.runner.shared_limits import LimitState

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def worker_pids() -> set[int]:
    """Live worker processes of this test process: the children of its fork server (and no
    other grandchild, such as the browser a Playwright driver started)."""
    parents: dict[int, int] = {}
    servers: set[int] = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
            command = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        found = re.search(r"^PPid:\s+(\d+)", text, re.MULTILINE)
        if found is None:
            continue
        pid, parent = int(status.parent.name), int(found.group(1))
        parents[pid] = parent
        if parent == os.getpid() and b"multiprocessing.forkserver" in command:
            servers.add(pid)
    return {pid for pid, parent in parents.items() if parent in servers}


def done_units(out: Path) -> set[str]:
    return {key for (key,) in index_rows(out, "SELECT unit_key FROM units WHERE status = 'done'")}


def kill_workers_at(world: World, out: Path, nth: int) -> dict[str, Any]:
    """From the ``nth`` system request on, once the index has a finished unit, SIGKILL every
    worker process (mid-unit: this request is answered only after the kill) and note the
    units the index had finished by then."""
    seen: dict[str, Any] = {}
    claimed: list[int] = []  # the one request that kills (the server answers on many threads)
    lock = threading.Lock()

    def on_reply(query: int, count: int) -> None:
        with lock:
            if count < nth or claimed:
                return
            claimed.append(query)
        deadline = time.monotonic() + 60
        while not done_units(out) and time.monotonic() < deadline:
            time.sleep(0.1)  # the other worker's unit gets scored meanwhile
        seen["done"] = done_units(out)
        pids = worker_pids()
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        seen["killed"] = len(pids)
        time.sleep(0.5)  # the worker is dead before it could read this answer

    world.on_reply = on_reply
    return seen


@pytest.mark.slow  # worker start-up and an embedded MOS model per worker
def test_single_turn_run_in_processes_equals_the_local_run(world, local_run, tmp_path) -> None:
    server, _ = world
    config = single_turn_config(tmp_path, server.url, processes={"workers": 2})
    result = run_cli(config, tmp_path / "proc", "--executor", "processes")
    assert result.exit_code == 0, result.output
    assert "processes: 2 workers" in result.output
    assert_same_results(local_run, tmp_path / "proc")
    usage = [index_rows(d, "SELECT provider, SUM(calls), SUM(requests) FROM usage GROUP BY 1")
             for d in (local_run, tmp_path / "proc")]  # fmt: skip
    assert usage[0] == usage[1] and usage[0]  # journaled by workers, written by the driver
    assert index_rows(tmp_path / "proc", "SELECT DISTINCT status, attempts FROM units") == [
        ("done", 1)
    ]
    models = yaml.safe_load((tmp_path / "proc" / "run.yaml").read_text())["models"]
    assert "system" in models and "mos" in models


@pytest.mark.slow  # worker start-up
def test_live_call_run_in_processes_equals_the_local_run(tmp_path) -> None:
    config = write_live_call_config(tmp_path)
    local = run_cli(config, tmp_path / "local")
    assert local.exit_code == 0, local.output
    remote = run_cli(config, tmp_path / "proc", "--executor", "processes", "--workers", "2")
    assert remote.exit_code == 0, remote.output
    assert_same_results(tmp_path / "local", tmp_path / "proc")
    for events in (tmp_path / "proc").rglob("events.jsonl"):  # the recordings are identical too
        twin = tmp_path / "local" / events.relative_to(tmp_path / "proc")
        assert events.read_bytes() == twin.read_bytes(), events


@pytest.mark.slow  # worker start-up, twice (the replacements)
def test_killed_workers_lose_no_finished_unit(
    local_run, fresh_world, world_cache, tmp_path
) -> None:
    server, responder = fresh_world
    config = single_turn_config(
        tmp_path, server.url, processes={"workers": 2}, cache_dir=str(world_cache)
    )
    seen = kill_workers_at(responder, tmp_path / "proc", nth=3)
    result = run_cli(config, tmp_path / "proc", "--executor", "processes")
    assert result.exit_code == 0, result.output
    assert seen["killed"] == 2 and len(seen["done"]) >= 1
    assert_same_results(local_run, tmp_path / "proc", usage=False)
    done_queries = {int(re.match(r"q(\d+)__", key).group(1)) for key in seen["done"]}
    assert all(responder.replies[q] == 1 for q in done_queries)  # never sent again
    # Only units in flight on a killed worker run again. How many were in flight depends on
    # timing (talking, prepared ahead, being scored; a request held back past the client's
    # timeout is also sent again), so the check is that some did and none was done.
    rerun = {q for q, n in responder.replies.items() if n > 1}
    assert rerun and not rerun & done_queries
    attempts = index_rows(tmp_path / "proc", "SELECT MAX(attempts) FROM units")[0][0]
    # the killed attempt counted; a unit sent to a worker in the moment between its kill
    # and the driver noticing counts that attempt too
    assert attempts in (2, 3)
    assert not list((tmp_path / "proc").rglob("error.txt"))


@pytest.mark.slow  # worker start-up
def test_a_unit_whose_worker_died_is_failed_with_cause_worker(
    local_run, fresh_world, world_cache, tmp_path
) -> None:
    server, responder = fresh_world
    config = single_turn_config(
        tmp_path, server.url, processes={"workers": 2, "max_retries": 0},
        cache_dir=str(world_cache),
    )  # fmt: skip
    kill_workers_at(responder, tmp_path / "proc", nth=2)
    first = run_cli(config, tmp_path / "proc", "--executor", "processes")
    assert first.exit_code == 1, first.output  # units failed on our side
    failed = index_rows(tmp_path / "proc", "SELECT unit_key, cause FROM units "
                        "WHERE status = 'failed'")  # fmt: skip
    assert failed and {cause for _, cause in failed} == {"worker"}
    error = next((tmp_path / "proc").rglob("error.txt")).read_text()
    assert "WorkerDied" in error and "exit code -9" in error
    assert_resume_runs_only_the_failed(
        responder, config, tmp_path / "proc", "processes", len(failed), local_run
    )


@pytest.mark.slow  # worker start-up
def test_a_providers_concurrency_limit_holds_across_workers(world_cache, tmp_path) -> None:
    """Two workers with 4 slots each, one system allowed 3 requests at once: the server
    never sees more than 3 (the limit is the driver's, leased by both workers)."""
    in_flight = {"now": 0, "most": 0}
    lock = threading.Lock()

    def respond(path: str, body: Any) -> Any:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        time.sleep(0.15)
        with lock:
            in_flight["now"] -= 1
        return FakeResponse(raw=audio_to_wav_bytes(tone(0.5, 220)), content_type="audio/wav")

    with FakeOpenAIServer(respond) as server:
        config = single_turn_config(
            tmp_path, server.url, concurrency=8, metrics=["duration"],
            processes={"workers": 2}, cache_dir=str(world_cache),
        )  # fmt: skip
        data = yaml.safe_load(config.read_text())
        data["systems"][0]["max_concurrency"] = 3
        for key in ("judge", "asr", "mos"):
            data.pop(key)
        config.write_text(yaml.safe_dump(data))
        result = run_cli(config, tmp_path / "proc", "--executor", "processes")
    assert result.exit_code == 0, result.output
    assert in_flight["most"] == 3


def test_a_worker_that_cannot_start_is_named() -> None:
    """A worker process that ends before it is ready: its name and exit code."""
    context = worker_processes_context()
    parent, child = context.Pipe(duplex=True)
    process = context.Process(target=sys.exit, args=(3,), daemon=True)
    process.start()
    child.close()
    with pytest.raises(ConfigError, match=r"processes: worker-7 could not start \(exit code 3"):
        await_ready(WorkerProcess("worker-7", process, parent), timeout_s=60)


def test_a_silent_worker_is_named() -> None:
    context = worker_processes_context()
    parent, child = context.Pipe(duplex=True)
    process = context.Process(target=time.sleep, args=(30,), daemon=True)
    process.start()
    try:
        with pytest.raises(ConfigError, match=r"worker-8 was not ready within 0\.5 s"):
            await_ready(WorkerProcess("worker-8", process, parent), timeout_s=0.5)
    finally:
        process.kill()
        child.close()


@pytest.mark.parametrize(
    ("workers", "concurrency", "protocol_uses_slots", "slots", "capacities"),
    [
        (2, 64, True, (32, 32), (72, 72)),  # 32 slots, as many being scored, 8 getting ready
        (2, 64, False, (32, 32), (32, 32)),  # a unit holds its slot until it is scored
        (3, 64, True, (22, 21, 21), (50, 48, 48)),  # never more slots than the concurrency
        (4, 2, False, (1, 1), (1, 1)),  # no more workers than slots ...
        (8, 5, True, (2, 2, 1), (5, 5, 3)),  # ... or units (3 here)
    ],
)
def test_process_shape(workers, concurrency, protocol_uses_slots, slots, capacities) -> None:
    config = parse_run_config(
        {"suite": "x", "systems": [{"name": "s", "type": "scripted"}],
         "concurrency": concurrency, "processes": {"workers": workers}},
        "test",
    )  # fmt: skip
    protocol = type("P", (), {"uses_system_call_slots": protocol_uses_slots})()
    shape = process_shape(config, protocol, n_units=3 if workers == 8 else 100)
    assert shape.slots == slots and sum(shape.slots) == concurrency
    assert tuple(shape.capacity(n) for n in shape.slots) == capacities
    assert shape.in_flight == sum(capacities)


def test_a_dead_workers_leases_are_given_back() -> None:
    """What a worker held when it died is given back as finished (its requests are over)."""
    from voxeval.runner.shared_limits import LimitValues

    state = LimitState(LimitValues(max_concurrency=4))
    assert state.lease(3) == 3
    state.give_back(finished=3)
    assert state.in_use == 0 and state.lease(4) == 4


def test_workers_needs_an_executor_with_workers(tmp_path) -> None:
    result = run_cli(write_live_call_config(tmp_path), tmp_path / "run", "--workers", "2")
    assert result.exit_code == 2
    assert "--workers is for --executor processes or --executor ray" in result.output
    assert not (tmp_path / "run").exists()


def test_run_help_names_the_executors() -> None:
    from typer.testing import CliRunner

    from voxeval.cli.main import app

    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "processes (worker processes of this machine)" in result.output
    assert "--workers" in result.output


@pytest.mark.slow  # a voxeval process, its fork server and two workers start
def test_ctrl_c_reaching_every_process_finishes_the_units_in_flight(
    fresh_world, world_cache, tmp_path
) -> None:
    """Ctrl-C in a terminal reaches the driver, the fork server and the workers alike: the
    workers keep going, the driver stops sending units, the ones sent finish and are
    recorded, the exit code is 130 and the same command resumes the rest."""
    server, responder = fresh_world
    # 12 units; two workers take 3 each (a slot, one being scored, one ready ahead)
    config = single_turn_config(
        tmp_path, server.url, metrics=["duration"], trials=2, cache_dir=str(world_cache)
    )
    data = yaml.safe_load(config.read_text())
    for key in ("judge", "asr", "mos"):
        data.pop(key)
    config.write_text(yaml.safe_dump(data))
    first_reply = threading.Event()

    def slow_reply(query: int, count: int) -> None:
        first_reply.set()
        time.sleep(0.6)

    responder.on_reply = slow_reply
    command = [sys.executable, "-m", "voxeval", "run", str(config), "--out",
               str(tmp_path / "proc"), "--executor", "processes", "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's job
    )  # fmt: skip
    try:
        assert first_reply.wait(timeout=120), "no system request arrived"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (out, err)
    assert "finishing the units in flight" in err
    statuses = dict(index_rows(tmp_path / "proc", "SELECT unit_key, status FROM units"))
    done = [key for key, status in statuses.items() if status == "done"]
    assert done and "failed" not in statuses.values() and "running" not in statuses.values()
    assert len(done) < len(statuses)  # the rest was never sent
    responder.on_reply = None
    again = run_cli(config, tmp_path / "proc", "--executor", "processes", "--workers", "2")
    assert again.exit_code == 0, again.output
    assert sum(responder.replies.values()) == len(statuses)  # each unit reached its system once


@pytest.mark.slow  # worker start-up, twice (the replacement)
def test_a_killed_workers_request_in_flight_is_in_usage(fresh_world, world_cache, tmp_path) -> None:
    """Issue 37, point 13: the request a worker had sent when it was killed counts in the
    run's usage (a row of 0 calls: the call never finished), and the unit's re-run adds its
    own; the usage's requests equal what the server received."""
    server, responder = fresh_world
    config = single_turn_config(
        tmp_path, server.url, processes={"workers": 1}, concurrency=1,
        metrics=["assertions", "duration"], cache_dir=str(world_cache),
    )  # fmt: skip
    seen = kill_workers_at(responder, tmp_path / "proc", nth=2)  # one request in flight
    result = run_cli(config, tmp_path / "proc", "--executor", "processes")
    assert result.exit_code == 0, result.output
    assert seen["killed"] == 1
    received = sum(responder.replies.values())
    assert received == N_QUERIES + 1  # the killed request, then its unit's re-run
    summary = json.loads((tmp_path / "proc" / "report" / "summary.json").read_text())
    system = summary["usage"]["by_provider"]["system:live"]
    assert (system["calls"], system["requests"]) == (N_QUERIES, received)
    lost = index_rows(tmp_path / "proc", "SELECT unit_key, calls, requests FROM usage "
                      "WHERE provider = 'system:live' AND calls = 0")  # fmt: skip
    assert [(calls, requests) for _, calls, requests in lost] == [(0, 1)]
    rerun = index_rows(tmp_path / "proc", f"SELECT attempts FROM units WHERE unit_key = "
                       f"'{lost[0][0]}'")  # fmt: skip
    assert rerun == [(2,)]  # counted with the attempt that sent it
