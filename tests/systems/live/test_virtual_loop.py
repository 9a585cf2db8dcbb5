"""The virtual-time loop a Pipecat pipeline runs on: time moves only when the loop is idle,
by jumps to its next timer, never past the limit the controller sets."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from voxeval.systems.live.virtual_loop import VirtualTimeLoop


@pytest.fixture
def loop() -> Iterator[VirtualTimeLoop]:
    loop = VirtualTimeLoop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.release()
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_sleeps_take_virtual_time_only_up_to_the_limit(loop: VirtualTimeLoop) -> None:
    woke: list[float] = []

    async def sleeper() -> None:
        for _ in range(3):
            await asyncio.sleep(10.0)
            woke.append(loop.time())

    asyncio.run_coroutine_threadsafe(sleeper(), loop)
    began = time.monotonic()
    assert loop.settle(25.0, timeout_s=5)
    assert woke == [10.0, 20.0] and loop.time() == 25.0  # the third is due at 30
    assert loop.settle(40.0, timeout_s=5)
    assert woke == [10.0, 20.0, 30.0] and loop.time() == 40.0
    assert time.monotonic() - began < 2.0  # 40 virtual seconds, no real waiting


def test_work_in_a_thread_takes_no_virtual_time(loop: VirtualTimeLoop) -> None:
    stamps: list[float] = []

    async def infer() -> None:
        stamps.append(loop.time())
        await asyncio.to_thread(time.sleep, 0.3)  # a model's real compute
        stamps.append(loop.time())
        await asyncio.sleep(0.5)
        stamps.append(loop.time())

    asyncio.run_coroutine_threadsafe(infer(), loop)
    assert loop.settle(1.0, timeout_s=5)
    assert stamps == [0.0, 0.0, 0.5]


def test_a_loop_busy_past_the_real_budget_is_reported(loop: VirtualTimeLoop) -> None:
    asyncio.run_coroutine_threadsafe(asyncio.to_thread(time.sleep, 1.0), loop)
    assert not loop.settle(1.0, timeout_s=0.2)
    assert loop.time() == 0.0
    assert loop.settle(1.0, timeout_s=5)  # done now


def test_to_wall_makes_an_ordinary_real_time_loop(loop: VirtualTimeLoop) -> None:
    loop.call_soon_threadsafe(loop.to_wall)

    async def nap() -> float:
        began = loop.time()
        await asyncio.sleep(0.2)
        return loop.time() - began

    slept = asyncio.run_coroutine_threadsafe(nap(), loop).result(5)
    assert 0.19 <= slept < 1.0 and abs(loop.time() - time.monotonic()) < 0.05
