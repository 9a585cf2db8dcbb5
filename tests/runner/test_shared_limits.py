"""The bookkeeping of limits shared by workers (``LimitState``) on a fake clock, and a
worker's client (``LeasedRateLimiter``) over an in-process channel to a ``LimitHost``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.event_loops import run_coroutine
from voxeval.runner.shared_limits import LeasedRateLimiter, LimitHost, LimitState, LimitValues


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


class HostChannel:
    """A ``LeaseChannel`` straight to a ``LimitHost`` on the same event loop."""

    def __init__(self, host: LimitHost) -> None:
        self.host = host
        self.leases = 0

    async def lease(self, want: int, tokens_each: int) -> int:
        self.leases += 1
        return await self.host.lease(want, tokens_each, wait_s=0.05)

    def lease_blocking(self, want: int, tokens_each: int) -> int:
        raise AssertionError("not used here")

    def give_back(self, finished: int, unused: int, token_correction: int) -> None:
        self.host.state.give_back(finished, unused, token_correction)

    def penalise(self, retry_after_s: float | None) -> None:
        self.host.state.penalise(retry_after_s)

    def stats(self) -> dict[str, float]:
        return self.host.state.stats()


def test_leased_limiter_batches_leases_and_never_exceeds_the_host() -> None:
    host = LimitHost({"max_concurrency": 3})
    channel = HostChannel(host)
    limiter = LeasedRateLimiter(channel, batch=4)
    running = {"now": 0, "most": 0}

    async def request() -> None:
        await limiter.acquire()
        running["now"] += 1
        running["most"] = max(running["most"], running["now"])
        await asyncio.sleep(0.01)
        running["now"] -= 1
        limiter.release()

    async def main() -> None:
        await asyncio.gather(*(request() for _ in range(12)))

    run_coroutine(main)
    assert running["most"] == 3
    assert host.state.in_use == 0 and host.state.granted_total == 12
    assert channel.leases < 12  # several slots per round trip
    assert limiter.stats()["lease_round_trips"] == channel.leases


def test_unused_slots_are_kept_briefly_then_given_back() -> None:
    host = LimitHost({"max_concurrency": 8, "requests_per_minute": 100})
    limiter = LeasedRateLimiter(HostChannel(host), batch=4, hold_s=0.05)

    async def main() -> tuple[int, int, int]:
        await limiter.acquire()
        limiter.release()
        kept = host.state.in_use  # a batch of 4 was leased, 1 used, 3 kept for the next
        await limiter.acquire()  # no round trip: a kept slot
        limiter.release()
        trips = limiter.round_trips
        await asyncio.sleep(0.15)
        return kept, trips, host.state.in_use

    kept, trips, after = run_coroutine(main)
    assert kept == 3 and trips == 1
    assert after == 0  # given back once nobody took them
    # only the requests that were sent count against the requests per minute
    assert host.state.stats()["requests_last_minute"] == 2


def test_a_429_gives_the_kept_slots_back_at_once() -> None:
    host = LimitHost({"max_concurrency": 8})
    limiter = LeasedRateLimiter(HostChannel(host), batch=4, hold_s=60.0)

    async def main() -> None:
        await limiter.acquire()
        assert host.state.in_use == 4  # one in use, three kept
        limiter.penalise(0.0)
        assert host.state.in_use == 1  # the kept ones went back
        limiter.release()

    run_coroutine(main)
    assert host.state.in_use == 0


def test_workers_sharing_a_tight_limit_both_get_slots() -> None:
    """Two workers, a limit of 2: slots one worker keeps come back within ``hold_s``, so the
    other is never starved and together they never exceed the limit."""
    host = LimitHost({"max_concurrency": 2})
    limiters = [LeasedRateLimiter(HostChannel(host), batch=4, hold_s=0.02) for _ in range(2)]
    served = [0, 0]
    running = {"now": 0, "most": 0}

    async def request(worker: int) -> None:
        await limiters[worker].acquire()
        running["now"] += 1
        running["most"] = max(running["most"], running["now"])
        await asyncio.sleep(0.005)
        running["now"] -= 1
        served[worker] += 1
        limiters[worker].release()

    async def main() -> None:
        await asyncio.gather(*(request(i % 2) for i in range(20)))

    run_coroutine(main)
    assert served == [10, 10] and running["most"] <= 2
