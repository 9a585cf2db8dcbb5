"""Provider limits shared across Ray workers: the actor under two worker processes that
never exceed it together (the bookkeeping itself: ``test_shared_limits``)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from voxeval.runner.ray_limits import kill_run_limiters, ray_limiter
from voxeval.runner.shared_limits import LimitValues


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
    from voxeval.providers.http.http_clients import close_async_clients
    from voxeval.providers.llm.llm_openai import OpenAIChat
    from voxeval.providers.usage.rate_limits import ProviderLimits, limiter_for
    from voxeval.runner.ray_limits import install_ray_limiters
    from voxeval.runner.shared_limits import LeasedRateLimiter

    install_ray_limiters(run_id, batch=4)
    llm = OpenAIChat(base_url=url, model="m", requests_per_minute=rpm, max_concurrency=8)
    shared = limiter_for(llm.endpoint.limit_key, ProviderLimits(requests_per_minute=rpm))
    assert isinstance(shared, LeasedRateLimiter)
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
