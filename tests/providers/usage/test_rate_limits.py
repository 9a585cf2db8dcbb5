"""Per-provider limits: requests per minute across concurrent units, AIMD back-off on 429s
shared by every unit of a provider, token budgets, and the limiter factory seam."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, FaultSchedule, chat_text
from voxeval.providers.http.http_clients import close_async_clients
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.providers.usage.rate_limits import (
    AdaptiveLimiter,
    ProviderLimits,
    RateLimiterBase,
    limiter_for,
    limiter_key,
    set_limiter_factory,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run_acquire(limiter: AdaptiveLimiter, tokens: int = 0) -> None:
    asyncio.run(limiter.acquire(tokens))


def test_aimd_halves_once_per_burst_and_recovers_additively() -> None:
    clock = Clock()
    limiter = AdaptiveLimiter("k", ProviderLimits(max_concurrency=8), clock=clock)
    for _ in range(5):  # one burst: five 429s within the cut interval count once
        limiter.penalise(None)
    assert limiter.stats()["allowed_concurrency"] == 4
    assert limiter.stats()["cuts"] == 1 and limiter.stats()["penalties"] == 5
    clock.now += 1.5
    limiter.penalise(None)  # a later burst halves again
    assert limiter.stats()["allowed_concurrency"] == 2
    clock.now += 1.5
    grown = []
    for _ in range(30):
        run_acquire(limiter)
        limiter.release()
        grown.append(limiter.stats()["allowed_concurrency"])
    # about one slot per window of successes (+1/window each): 2 -> 3 after three
    assert grown[:2] == [2, 2] and grown[2] == 3 and grown[-1] == 8
    assert grown == sorted(grown)
    assert limiter.stats()["rate_scale"] == pytest.approx(
        0.25 + 30 * 0.02
    )  # two cuts, +0.02 a success


def test_concurrency_window_blocks_the_next_caller_until_a_release() -> None:
    limiter = AdaptiveLimiter("k", ProviderLimits(max_concurrency=2))
    limiter.acquire_blocking()
    limiter.acquire_blocking()
    got: list[float] = []
    start = time.monotonic()  # before the thread starts: a late thread start cannot shrink it

    def third() -> None:
        limiter.acquire_blocking()
        got.append(time.monotonic() - start)

    worker = threading.Thread(target=third)
    worker.start()
    time.sleep(0.2)
    assert not got  # still waiting for a slot
    limiter.release()
    worker.join(2)
    assert got and got[0] >= 0.2
    assert limiter.stats()["in_flight"] == 2


def test_token_budget_waits_and_is_corrected_by_the_real_count() -> None:
    clock = Clock()
    # 6,000 tokens a minute = 100 a second, bucket of one second's worth
    limiter = AdaptiveLimiter("k", ProviderLimits(tokens_per_minute=6000), clock=clock)
    assert limiter._try(100) == 0  # the full bucket
    assert limiter._try(50) == pytest.approx(0.5)  # 50 more tokens take half a second
    limiter._in_flight = 0
    clock.now += 0.5
    assert limiter._try(50) == 0


def test_sixty_requests_per_minute_hold_across_concurrent_units() -> None:
    """Four concurrent units, two provider objects for the same base URL and model: one
    request a second reaches the server."""
    with FakeOpenAIServer(lambda path, body: chat_text("ok")) as server:
        spec: dict[str, Any] = {"base_url": server.url, "model": "m", "requests_per_minute": 60}
        first, second = OpenAIChat(**spec), OpenAIChat(**spec)

        async def units() -> None:
            await asyncio.gather(
                *(
                    llm.achat([{"role": "user", "content": "hi"}])
                    for llm in (first, second, first, second)
                )
            )
            await close_async_clients()

        asyncio.run(units())
        arrivals = sorted(start for start, _, _ in server.spans)
    assert len(arrivals) == 4
    # The bucket grants the k-th request k seconds after the first; network and scheduling
    # delay only move an arrival later, so only the first one's delay can shrink a distance.
    since_first = [at - arrivals[0] for at in arrivals]
    assert all(since_first[k] >= k - 0.25 for k in range(4)), since_first
    assert since_first[-1] < 5, since_first  # and the bucket does not hold them back longer


def max_overlap(spans: list[tuple[float, float, int]], after: float, before: float) -> int:
    """The most requests in flight at once among those that arrived in [after, before)."""
    chosen = [(s, e) for s, e, _ in spans if after <= s < before]
    events = sorted([(s, 1) for s, _ in chosen] + [(e, -1) for _, e in chosen])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def test_a_burst_of_429s_slows_every_unit_of_the_provider_and_it_recovers() -> None:
    """Eight 429s in a row (Retry-After 0): the provider's window halves for all 16 units
    (threads), a second provider object with the same key included, then grows back."""
    faults = FaultSchedule(["rate_limit"] * 8, paths=["/chat/completions"])
    with FakeOpenAIServer(
        lambda path, body: chat_text("ok"), faults=faults, delay_s=0.05
    ) as server:
        spec: dict[str, Any] = {
            "base_url": server.url,
            "model": "m",
            "max_concurrency": 8,
            "backoff_base_s": 0.01,
            "max_retries": 6,
        }
        providers = [OpenAIChat(**spec), OpenAIChat(**spec)]
        limiter = limiter_for(limiter_key(server.url, "m"), ProviderLimits(max_concurrency=8))
        assert isinstance(limiter, AdaptiveLimiter)
        limiter.cut_interval_s = 0.3
        lowest: list[float] = []

        def unit(i: int) -> None:
            for _ in range(6):
                providers[i % 2].chat([{"role": "user", "content": "hi"}])
                lowest.append(limiter.stats()["allowed_concurrency"])

        threads = [threading.Thread(target=unit, args=(i,)) for i in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        spans = list(server.spans)
    stats = limiter.stats()
    assert stats["penalties"] == 8 and 1 <= stats["cuts"] <= 3
    assert min(lowest) <= 4  # halved at least once, for every unit
    last_429 = max(end for _, end, status in spans if status == 429)
    # right after the burst, at most half the configured concurrency reaches the server
    assert max_overlap(spans, last_429, last_429 + 0.25) <= 4
    assert stats["allowed_concurrency"] == 8  # recovered additively
    assert max_overlap(spans, 0, float("inf")) <= 8  # never above the configured limit
    assert len([s for s in spans if s[2] == 200]) == 16 * 6


def test_limiter_factory_seam_replaces_the_default() -> None:
    made: list[tuple[str, ProviderLimits]] = []

    class Recording(AdaptiveLimiter):
        def __init__(self, key: str, limits: ProviderLimits) -> None:
            made.append((key, limits))
            super().__init__(key, limits)

    try:
        set_limiter_factory(Recording)
        limits = ProviderLimits(max_concurrency=3, requests_per_minute=600)
        found = limiter_for("http://x/v1#m", limits)
        assert isinstance(found, Recording) and limiter_for("http://x/v1#m", limits) is found
        assert made == [("http://x/v1#m", limits)]
    finally:
        set_limiter_factory(None)
    assert not isinstance(limiter_for("http://x/v1#m", limits), Recording)


def test_429_with_retry_after_pauses_the_provider() -> None:
    """A Retry-After of 1 s holds back a concurrent unit's next request too."""
    responses = iter([FakeResponse(status=429, headers={"Retry-After": "1"})])

    def responder(path: str, body: Any) -> FakeResponse:
        return next(responses, None) or chat_text("ok")

    with FakeOpenAIServer(responder) as server:
        spec: dict[str, Any] = {"base_url": server.url, "model": "p", "max_concurrency": 4}
        llm = OpenAIChat(**spec)

        async def units() -> None:
            first = asyncio.create_task(llm.achat([{"role": "user", "content": "a"}]))
            while llm.endpoint.limiter.stats()["penalties"] < 1:  # until the 429 is in
                await asyncio.sleep(0.01)
            await asyncio.gather(first, llm.achat([{"role": "user", "content": "b"}]))
            await close_async_clients()

        asyncio.run(units())
        starts = sorted(start for start, _, _ in server.spans)
    assert len(starts) == 3  # the 429, then the retry and the other unit's request
    assert starts[1] - starts[0] >= 0.95 and starts[2] - starts[0] >= 0.95


class AsyncOnlyLimiter(RateLimiterBase):
    """A limiter a factory might make that can only wait from asyncio (e.g. over a remote
    channel): ``acquire_blocking`` comes from ``RateLimiterBase``."""

    def __init__(self) -> None:
        self.acquired: list[int] = []

    async def acquire(self, tokens: int = 0) -> None:
        await asyncio.sleep(0)
        self.acquired.append(tokens)

    def release(self, tokens_used: int | None = None) -> None:
        pass

    def penalise(self, retry_after_s: float | None) -> None:
        pass

    def stats(self) -> dict[str, float]:
        return {"acquired": float(len(self.acquired))}


def test_a_limiter_that_only_waits_from_asyncio_gets_acquire_blocking_from_the_base() -> None:
    limiter = AsyncOnlyLimiter()
    limiter.acquire_blocking(7)  # from a plain thread: ``acquire`` on a private event loop
    limiter.acquire_blocking()
    assert limiter.acquired == [7, 0]
    assert limiter.stats() == {"acquired": 2.0}
