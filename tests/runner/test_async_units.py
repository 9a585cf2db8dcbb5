"""The asyncio execution model of ``execute_units``: async work waits without a thread,
``concurrency`` units at a time; blocking work runs in its own pool; collectors follow a
unit into its threads; a unit raising KeyboardInterrupt stops the pass cleanly."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from voxeval.providers.http.openai_http import RequestCounts, count_requests
from voxeval.runner.collector_pause import YOUNG_COLLECTION_EVERY
from voxeval.runner.event_loop import CPU_THREADS, unit_loop
from voxeval.runner.execute import execute_units


@dataclass(frozen=True)
class Unit:
    key: str


def context(concurrency: int) -> Any:
    return SimpleNamespace(
        config=SimpleNamespace(concurrency=concurrency),
        console=Console(quiet=True),
        system_call_slots=None,
    )


class Peak:
    def __init__(self) -> None:
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.now -= 1


def test_async_units_run_concurrency_at_a_time_on_one_thread() -> None:
    peak, threads = Peak(), set()

    async def work(unit: Unit) -> None:
        threads.add(threading.get_ident())
        with peak:
            await asyncio.sleep(0.2)

    units = [Unit(f"u{i}") for i in range(32)]
    start = time.perf_counter()
    outcome = execute_units(context(16), units, work, lambda u, e: str(e), "t")
    wall = time.perf_counter() - start
    assert (outcome.done, outcome.failed, outcome.skipped) == (32, 0, 0)
    assert peak.peak == 16 and len(threads) == 1
    assert wall < 0.4 + 1.0  # two waves of 0.2 s, plus slack for a loaded machine


def test_blocking_units_get_a_thread_each_and_cpu_work_a_small_pool() -> None:
    peak, cpu_threads = Peak(), set()

    def blocking(unit: Unit) -> None:
        with peak:
            time.sleep(0.1)

    outcome = execute_units(context(12), [Unit(str(i)) for i in range(24)], blocking, str, "t")
    assert outcome.done == 24 and peak.peak == 12

    async def cpu(unit: Unit) -> None:
        await asyncio.to_thread(lambda: cpu_threads.add(threading.get_ident()) or time.sleep(0.01))

    execute_units(context(12), [Unit(str(i)) for i in range(48)], cpu, str, "t")
    assert len(cpu_threads) <= CPU_THREADS


def test_request_tallies_follow_each_unit_into_its_threads() -> None:
    seen: dict[str, float] = {}

    async def work(unit: Unit) -> None:
        with count_requests() as tally:
            n = int(unit.key)
            await asyncio.to_thread(lambda: [t.add(requests=n) for t in _open()])
            await asyncio.sleep(0.01)
            seen[unit.key] = tally.requests

    def _open() -> list[RequestCounts]:
        from voxeval.providers.http.openai_http import _tallies

        return _tallies.items()

    execute_units(context(8), [Unit(str(i)) for i in range(1, 9)], work, str, "t")
    assert seen == {str(i): i for i in range(1, 9)}


def test_failures_are_recorded_and_a_unit_interrupt_stops_new_units(tmp_path: Path) -> None:
    started: list[str] = []

    async def work(unit: Unit) -> None:
        started.append(unit.key)
        if unit.key == "bad":
            raise ValueError("broken")
        if unit.key == "stop":
            raise KeyboardInterrupt
        await asyncio.sleep(0.05)

    units = [Unit("bad"), Unit("ok1"), Unit("stop")] + [Unit(f"later{i}") for i in range(10)]
    errors: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        execute_units(context(3), units, work, lambda u, e: errors.append(u.key) or str(e), "t")
    assert errors == ["bad"]
    assert not any(key.startswith("later") for key in started[4:])  # none after the stop


CTRL_C_SCRIPT = """
import asyncio, sys
from types import SimpleNamespace
from rich.console import Console
from voxeval.runner.execute import execute_units

class Unit:
    def __init__(self, i):
        self.key = str(i)

finished = []

async def work(unit):
    if unit.key == "0":
        print("started", flush=True)
    await asyncio.sleep(1.0)
    finished.append(unit.key)

ctx = SimpleNamespace(config=SimpleNamespace(concurrency=4), console=Console(stderr=True))
try:
    execute_units(ctx, [Unit(i) for i in range(40)], work, lambda u, e: str(e), "t")
except KeyboardInterrupt:
    print("interrupted", len(finished), flush=True)
"""


def test_first_ctrl_c_lets_units_in_flight_finish_then_raises() -> None:
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert out.split() == ["interrupted", "4"], (out, err)  # the 4 in flight finished
    assert "finishing the units in flight" in err


def test_units_run_where_an_event_loop_already_runs_on_the_thread() -> None:
    """A notebook, or a test session driving Playwright's sync API, already has a loop on the
    main thread; the units' loop then runs on a thread of its own, results and errors intact."""

    async def answer() -> str:
        await asyncio.sleep(0)
        return threading.current_thread().name

    async def broken() -> None:
        raise ValueError("from the unit loop")

    async def caller() -> tuple[str, str]:
        ran_on = unit_loop(answer(), workers=1)
        with pytest.raises(ValueError, match="from the unit loop"):
            unit_loop(broken(), workers=1)
        return ran_on, threading.current_thread().name

    # on a thread of our own: in a full test session the main thread may already carry
    # Playwright's loop (the session-scoped browser), where asyncio.run itself is refused
    results: list[tuple[str, str]] = []
    host = threading.Thread(target=lambda: results.append(asyncio.run(caller())), name="host")
    host.start()
    host.join(timeout=60)
    assert results == [("voxeval-units", "host")]


def test_a_pass_collects_young_objects_less_often_and_restores_the_collector() -> None:
    before = gc.get_threshold()

    async def inside() -> tuple[int, ...]:
        return gc.get_threshold()

    assert unit_loop(inside(), workers=1) == (YOUNG_COLLECTION_EVERY, *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(ValueError):  # restored when the pass raises too

        async def broken() -> None:
            raise ValueError("stop")

        unit_loop(broken(), workers=1)
    assert gc.get_threshold() == before


def test_overlapping_passes_share_the_collector_settings_until_the_last_one_ends() -> None:
    before = gc.get_threshold()
    tuned = (YOUNG_COLLECTION_EVERY, *before[1:])
    first_inside, second_done = threading.Event(), threading.Event()
    seen: dict[str, tuple[int, ...]] = {}

    async def first() -> None:
        first_inside.set()
        await asyncio.to_thread(second_done.wait, 30)
        seen["first, after the second ended"] = gc.get_threshold()

    async def second() -> None:
        seen["second"] = gc.get_threshold()

    other = threading.Thread(target=lambda: unit_loop(first(), workers=1))
    other.start()
    assert first_inside.wait(30)
    unit_loop(second(), workers=1)  # while the first pass still runs on the other thread
    second_done.set()
    other.join(30)
    assert seen == {"second": tuned, "first, after the second ended": tuned}
    assert gc.get_threshold() == before


def test_finish_stage_frees_the_slot_and_a_unit_is_done_only_when_finished() -> None:
    """With ``finish``, the next unit talks to the system while the last one is scored:
    ``concurrency`` units in the system stage and at most ``concurrency`` in finish."""
    in_system, in_finish = Peak(), Peak()
    order: list[str] = []

    async def work(unit: Unit) -> str:
        with in_system:
            await asyncio.sleep(0.05)
        return unit.key.upper()

    async def finish(unit: Unit, reply: str) -> None:
        with in_finish:
            await asyncio.sleep(0.2)  # scoring slower than the system
        assert reply == unit.key.upper()  # what work returned
        order.append(unit.key)

    units = [Unit(f"u{i}") for i in range(12)]
    start = time.perf_counter()
    outcome = execute_units(context(3), units, work, lambda u, e: str(e), "t", finish)
    wall = time.perf_counter() - start
    assert (outcome.done, outcome.failed) == (12, 0)
    assert sorted(order) == sorted(u.key for u in units)
    assert in_system.peak == 3 and in_finish.peak == 3
    # finish bounds the pace (12 x 0.2 s / 3), and the system stage overlaps it
    assert 0.8 <= wall < 0.8 + 0.15 * 4 + 1.0


def test_a_failing_finish_stage_is_a_failed_unit() -> None:
    async def work(unit: Unit) -> None:
        return None

    async def finish(unit: Unit, _: None) -> None:
        if unit.key == "u1":
            raise RuntimeError("scoring broke")

    recorded: list[str] = []

    def on_error(unit: Unit, exc: Exception) -> str:
        recorded.append(unit.key)
        return str(exc)

    units = [Unit(f"u{i}") for i in range(4)]
    outcome = execute_units(context(2), units, work, on_error, "t", finish)
    assert (outcome.done, outcome.failed) == (3, 1)
    assert recorded == ["u1"] and outcome.errors == ["u1: scoring broke"]


def test_an_interrupt_in_the_finish_stage_lets_started_units_finish() -> None:
    finished: list[str] = []

    async def work(unit: Unit) -> None:
        await asyncio.sleep(0.01)

    async def finish(unit: Unit, _: None) -> None:
        if unit.key == "u2":
            raise KeyboardInterrupt
        await asyncio.sleep(0.05)
        finished.append(unit.key)

    units = [Unit(f"u{i}") for i in range(20)]
    outcome = None
    with pytest.raises(KeyboardInterrupt):
        outcome = execute_units(context(2), units, work, lambda u, e: str(e), "t", finish)
    assert outcome is None
    assert "u2" not in finished and len(finished) < 19  # stopped taking new units
    assert {"u0", "u1"} <= set(finished)  # units already past their system stage finished


def test_the_next_unit_talks_to_the_system_while_the_last_one_is_finishing() -> None:
    """At concurrency 1, u0's finish stage waits until u1 has reached the system: the slot
    must be free while a unit is scored (if it were held, this would wait forever)."""
    second_in_system = asyncio.Event()

    async def work(unit: Unit) -> None:
        if unit.key == "u1":
            second_in_system.set()

    async def finish(unit: Unit, _: None) -> None:
        if unit.key == "u0":
            await asyncio.wait_for(second_in_system.wait(), timeout=10)

    units = [Unit(f"u{i}") for i in range(3)]
    outcome = execute_units(context(1), units, work, lambda u, e: str(e), "t", finish)
    assert (outcome.done, outcome.failed) == (3, 0), outcome.errors


def test_units_prepared_ahead_wait_for_a_system_slot() -> None:
    """``ahead``: more units start than ``concurrency``, but only ``concurrency`` at a time
    hold a slot of ``ctx.system_call_slots`` (the system's wait); the slots are the pass's."""
    ctx = context(4)
    started, calling = Peak(), Peak()
    slot_sets: set[int] = set()

    async def work(unit: Unit) -> None:
        with started:
            await asyncio.sleep(0.01)  # reading the input
            slots = ctx.system_call_slots
            assert slots is not None
            slot_sets.add(id(slots))
            async with slots:
                with calling:
                    await asyncio.sleep(0.05)  # the system

    async def finish(unit: Unit, _: None) -> None:
        await asyncio.sleep(0)

    units = [Unit(f"u{i}") for i in range(24)]
    outcome = execute_units(ctx, units, work, lambda u, e: str(e), "t", finish, ahead=2)
    assert (outcome.done, outcome.failed) == (24, 0)
    assert calling.peak == 4 and started.peak == 6  # 4 with the system, 2 ready for it
    assert len(slot_sets) == 1 and ctx.system_call_slots is None  # gone after the pass
