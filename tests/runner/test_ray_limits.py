"""Provider limits shared across Ray workers: the bookkeeping (``LimitState``) on a fake
clock, and the actor under two worker processes that never exceed it together."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from voxeval.runner.ray_limits import (
    LimitState,
    LimitValues,
    kill_run_limiters,
    ray_limiter,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def state(clock: Clock, **limits: Any) -> LimitState:
    return LimitState(LimitValues(**limits), clock=clock)


def test_requests_per_minute_is_a_sliding_window() -> None:
    clock = Clock()
    limits = state(clock, requests_per_minute=3)
    assert limits.lease(5) == 3
    limits.give_back(finished=3)
    clock.now += 20
    assert limits.lease(1) == 0
    assert limits.grantable(1, 0) == (0, pytest.approx(40.0))  # the first grant ages out
    clock.now += 40
    assert limits.lease(2) == 2  # the window moved past the first three
    assert limits.stats()["requests_last_minute"] == 2


def test_unused_slots_are_not_counted_as_requests() -> None:
    clock = Clock()
    limits = state(clock, requests_per_minute=4, max_concurrency=4)
    assert limits.lease(4) == 4
    limits.give_back(finished=1, unused=2)
    assert limits.in_use == 1
    assert limits.lease(4) == 2  # 2 requests of 4 were sent, so two more this minute


def test_tokens_per_minute_counts_estimates_and_corrections() -> None:
    clock = Clock()
    limits = state(clock, tokens_per_minute=100)
    assert limits.lease(5, tokens_each=30) == 3  # 90 of 100 tokens
    limits.give_back(finished=3, token_correction=-60)  # they used 30 in all
    assert limits.stats()["tokens_last_minute"] == 30
    assert limits.lease(5, tokens_each=30) == 2
    assert limits.lease(1, tokens_each=30) == 0


def test_concurrency_halves_on_429_pauses_and_grows_back() -> None:
    clock = Clock()
    limits = state(clock, max_concurrency=8)
    assert limits.lease(8) == 8
    limits.penalise(retry_after_s=2.5)
    assert limits.limit == 4
    limits.give_back(finished=8)
    assert limits.limit == pytest.approx(5.688619)  # x + 1/x, eight times from 4
    limits.penalise(None)  # no Retry-After: the pause already running is kept
    assert limits.limit == 2
    assert limits.lease(1) == 0 and limits.grantable(1, 0)[1] == pytest.approx(2.5)
    clock.now += 2.5
    assert limits.lease(10) == 2
    limits.give_back(finished=1)
    assert limits.limit == pytest.approx(2.5)  # + 1/limit per finished request
    assert limits.stats()["penalties"] == 2


def hammer(
    run_id: str, requests: int, limits: dict[str, Any], hold_s: float, key: str = "llm:a"
) -> dict[str, Any]:
    """In a Ray worker process: ``requests`` concurrent requests through the shared limiter,
    each holding its slot ``hold_s``; returns when each held one and the lease round trips."""
    import os

    limiter = ray_limiter(run_id, key, LimitValues(**limits), batch=4)
    held: list[tuple[float, float]] = []

    async def one() -> None:
        await limiter.acquire(tokens=10)
        start = time.time()
        await asyncio.sleep(hold_s)
        held.append((start, time.time()))
        limiter.release(tokens_used=10)

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(requests)))

    asyncio.run(main())
    return {"pid": os.getpid(), "held": held, "round_trips": limiter.round_trips}


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    peak = level = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


@pytest.mark.slow  # two worker processes and two actors start on a 2-CPU cluster
def test_two_workers_together_never_exceed_the_concurrency(ray_cluster) -> None:
    ray = ray_cluster
    run_id = f"limits-{uuid.uuid4().hex[:6]}"
    task = ray.remote(num_cpus=1)(hammer)
    try:
        results = ray.get(
            [task.remote(run_id, 12, {"max_concurrency": 3}, 0.05) for _ in range(2)],
            timeout=120,
        )
        assert len({r["pid"] for r in results}) == 2  # two worker processes
        intervals = [span for r in results for span in r["held"]]
        assert len(intervals) == 24
        assert max_overlap(intervals) <= 3
        # With room to spare, one round trip serves several waiting requests of a worker.
        light = ray.get(task.remote(run_id, 12, {"max_concurrency": 64}, 0.05, "llm:b"))
        assert len(light["held"]) == 12 and light["round_trips"] <= 6
    finally:
        kill_run_limiters(run_id)
    assert not [a for a in ray.util.list_named_actors(all_namespaces=True) if run_id in a["name"]]


def try_requests(run_id: str, n: int, limits: dict[str, Any], within_s: float) -> int:
    """In a Ray worker: how many of ``n`` requests got a slot within ``within_s``."""
    limiter = ray_limiter(run_id, "llm:loopback", LimitValues(**limits), batch=4)
    limiter.stats()  # the actor is up before the clock starts (its start-up is no grant)

    async def one() -> bool:
        try:
            await asyncio.wait_for(limiter.acquire(), within_s)
        except TimeoutError:
            return False
        limiter.release()
        return True

    async def main() -> list[bool]:
        return await asyncio.gather(*(one() for _ in range(n)))

    return sum(asyncio.run(main()))


@pytest.mark.slow  # the requests over the limit wait out their 8 s (generous: a loaded CI)
def test_two_workers_together_never_exceed_the_requests_per_minute(ray_cluster) -> None:
    ray = ray_cluster
    run_id = f"limits-{uuid.uuid4().hex[:6]}"
    task = ray.remote(num_cpus=1)(try_requests)
    try:
        granted = ray.get(
            [task.remote(run_id, 8, {"requests_per_minute": 10}, 8.0) for _ in range(2)],
            timeout=120,
        )
        assert sum(granted) == 10  # 16 asked within a minute; exactly the limit got through
        assert all(g > 0 for g in granted)  # both workers drew on the one shared budget
    finally:
        kill_run_limiters(run_id)


def chat_in_worker(
    run_id: str, url: str, rpm: float, tries: int, within_s: float
) -> dict[str, Any]:
    """In a Ray worker, as ``UnitWorker`` sets it up: the run's limiters installed, then a
    real ``OpenAIChat`` provider with ``requests_per_minute`` asks the loopback server. With
    ``tries`` == 0 one synchronous ``chat`` (a provider called from a thread); else ``tries``
    concurrent ``achat`` calls, each given up after ``within_s``."""
    import os

    from tests.fakes.openai_server import FakeOpenAIServer  # noqa: F401  (importable here)
    from voxeval.providers.http_clients import close_async_clients
    from voxeval.providers.llm_openai import OpenAIChat
    from voxeval.providers.rate_limits import ProviderLimits, limiter_for
    from voxeval.runner.ray_limits import RayRateLimiter, install_ray_limiters

    install_ray_limiters(run_id, batch=4)
    llm = OpenAIChat(base_url=url, model="m", requests_per_minute=rpm, max_concurrency=8)
    shared = limiter_for(llm.endpoint.limit_key, ProviderLimits(requests_per_minute=rpm))
    assert isinstance(shared, RayRateLimiter)
    assert llm.endpoint.limiter is shared  # the provider waits on the run's shared actor
    messages = [{"role": "user", "content": "hi"}]
    if tries == 0:
        llm.chat(messages)  # acquire_blocking on the shared limiter
        return {"pid": os.getpid(), "answered": 1}

    async def one() -> bool:
        try:
            await asyncio.wait_for(llm.achat(messages), within_s)
        except TimeoutError:
            return False
        return True

    async def main() -> list[bool]:
        try:
            return await asyncio.gather(*(one() for _ in range(tries)))
        finally:
            await close_async_clients()

    return {"pid": os.getpid(), "answered": sum(asyncio.run(main()))}


@pytest.mark.slow  # worker start-up, then the requests over the limit wait out their 6 s
def test_a_providers_requests_per_minute_holds_across_two_workers(ray_cluster) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer, chat_text

    ray = ray_cluster
    run_id = f"limits-{uuid.uuid4().hex[:6]}"
    task = ray.remote(num_cpus=1)(chat_in_worker)
    with FakeOpenAIServer(lambda path, body: chat_text("ok")) as server:
        try:
            # first one threaded call from each worker, then both race for what is left
            sync = ray.get([task.remote(run_id, server.url, 8, 0, 0.0) for _ in range(2)])
            racing = ray.get(
                [task.remote(run_id, server.url, 8, 6, 6.0) for _ in range(2)], timeout=120
            )
        finally:
            kill_run_limiters(run_id)
        arrivals = sorted(arrived for arrived, _, _ in server.spans)
    assert [r["answered"] for r in sync] == [1, 1]
    # 14 asked within a minute by two processes; the server saw exactly the 8 allowed
    assert sum(r["answered"] for r in racing) == 6
    assert len(arrivals) == 8
    assert arrivals[-1] - arrivals[0] < 60.0  # all inside one window: the limit was the cap
    assert len({r["pid"] for r in sync + racing}) >= 2  # more than one worker process
