"""Per-provider limits shared by every unit of a process: in-flight requests, requests per
minute and tokens per minute, with adaptive back-off when the provider answers 429.

A provider is keyed by its base URL and model; every endpoint with that key waits on the
same ``RateLimiter``. The default limiter (``AdaptiveLimiter``) works from asyncio tasks
(``await acquire()``) and from threads (``acquire_blocking()``) at once.

Back-off is AIMD, the scheme TCP uses for congestion: a 429 halves the provider's allowed
concurrency and its request/token rates (at most once per ``cut_interval_s``, so one burst of
429s from requests already in flight counts once) and, with a Retry-After, pauses every new
request until it has passed; each success afterwards grows the concurrency window by
``1/window`` (about one slot per window of successes) and the rate back by a small step, up
to the configured limits.

``set_limiter_factory`` replaces how limiters are made (e.g. one shared across Ray workers;
a limiter that can only wait from asyncio inherits ``RateLimiterBase`` for its
``acquire_blocking``);
``limiter_for`` returns the process-wide limiter of a key.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import contextvars
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

RATE_RECOVERY_STEP = 0.02  # share of the configured rate regained per success after a cut
MIN_SCALE = 1 / 64  # the rate never drops below 1/64 of the configured one
DEFAULT_CUT_INTERVAL_S = 1.0


class ProviderLimits(BaseModel):
    """Limits of one provider (base URL + model), shared by every unit using it.

    ``max_concurrency``: requests in flight at once. ``requests_per_minute`` and
    ``tokens_per_minute`` (None: unlimited) are token buckets holding one second's worth
    (at least one request / one request's tokens), so requests are spread evenly rather
    than sent in a burst each minute."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_concurrency: int = Field(default=8, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)


class RateLimiter(Protocol):
    async def acquire(self, tokens: int = 0) -> None:
        """Wait for a free slot and budget for one request of ``tokens`` (an estimate)."""
        ...

    def release(self, tokens_used: int | None = None) -> None:
        """The request finished; ``tokens_used`` corrects the estimate (None: keep it)."""
        ...

    def penalise(self, retry_after_s: float | None) -> None:
        """The provider answered 429 (``retry_after_s`` from its header, if any)."""
        ...

    def acquire_blocking(self, tokens: int = 0) -> None:
        """``acquire`` from a thread (blocks the calling thread)."""
        ...

    def stats(self) -> dict[str, float]: ...


class RateLimiterBase(abc.ABC):
    """The default of ``RateLimiter``'s optional member, for a limiter that only waits from
    asyncio: ``acquire_blocking`` runs ``acquire`` on a private event loop."""

    @abc.abstractmethod
    async def acquire(self, tokens: int = 0) -> None: ...

    def acquire_blocking(self, tokens: int = 0) -> None:
        asyncio.run(self.acquire(tokens))


# The token estimate of the request acquired in this context (a task or a thread), so that
# release() can correct the charge by the real count.
_estimate: contextvars.ContextVar[int] = contextvars.ContextVar("voxeval_token_estimate", default=0)


class _Bucket:
    """A token bucket refilled at ``per_minute / 60`` per second, holding ``capacity``."""

    def __init__(self, per_minute: float, capacity: float, now: float) -> None:
        self.per_second = per_minute / 60.0
        self.capacity = capacity
        self.level = capacity
        self.stamp = now

    def refill(self, now: float, scale: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.per_second * scale)
        self.stamp = now

    def wait_for(self, amount: float, scale: float) -> float:
        """Seconds until ``amount`` (capped at the capacity) is available; 0 when it is."""
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need / (self.per_second * scale)


class AdaptiveLimiter(RateLimiterBase):
    """The in-process ``RateLimiter``: thread-safe, awaitable, with AIMD back-off on 429."""

    def __init__(
        self,
        key: str,
        limits: ProviderLimits,
        *,
        cut_interval_s: float = DEFAULT_CUT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.limits = limits
        self.cut_interval_s = cut_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = 0
        self._window = float(limits.max_concurrency)
        self._scale = 1.0
        self._paused_until = 0.0
        self._last_cut = -math.inf
        self._waiters: deque[Callable[[], None]] = deque()
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        now = clock()
        self._requests = None if rpm is None else _Bucket(rpm, max(1.0, rpm / 60.0), now)
        self._tokens = None if tpm is None else _Bucket(tpm, max(1.0, tpm / 60.0), now)
        self._counts = {"acquired": 0.0, "waits": 0.0, "penalties": 0.0, "cuts": 0.0}
        self._peak_in_flight = 0

    # -- state (call with the lock held) ------------------------------------------------------

    def _allowed(self) -> int:
        return max(1, int(self._window))

    def _try(self, tokens: int) -> float:
        """Take a slot and budget and return 0, or return how long to wait (inf: until a
        slot is released)."""
        now = self._clock()
        if now < self._paused_until:
            return self._paused_until - now
        if self._in_flight >= self._allowed():
            return math.inf
        wait = 0.0
        for bucket, amount in ((self._requests, 1.0), (self._tokens, float(tokens))):
            if bucket is not None and amount > 0:
                bucket.refill(now, self._scale)
                wait = max(wait, bucket.wait_for(amount, self._scale))
        if wait > 0:
            return wait
        if self._requests is not None:
            self._requests.level -= 1.0
        if self._tokens is not None:
            self._tokens.level -= tokens
        self._in_flight += 1
        self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
        self._counts["acquired"] += 1
        return 0.0

    def _wake_one(self) -> None:
        if self._waiters:
            self._waiters.popleft()()

    # -- RateLimiter --------------------------------------------------------------------------

    async def acquire(self, tokens: int = 0) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                wait = self._try(tokens)
                if wait == 0:
                    if self._in_flight < self._allowed():
                        self._wake_one()  # capacity left: let the next waiter try too
                    break
                self._counts["waits"] += 1
                woken = loop.create_future()

                def wake(fut: asyncio.Future[None] = woken) -> None:
                    # a closed loop raises RuntimeError: nobody waits there any more
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(_resolve, fut)

                self._waiters.append(wake)
            try:
                await asyncio.wait_for(woken, None if math.isinf(wait) else wait)
            except TimeoutError:
                pass
            finally:
                with self._lock:
                    if wake in self._waiters:
                        self._waiters.remove(wake)
        _estimate.set(tokens)

    def acquire_blocking(self, tokens: int = 0) -> None:
        """``acquire`` for threads (blocks the calling thread)."""
        while True:
            with self._lock:
                wait = self._try(tokens)
                if wait == 0:
                    if self._in_flight < self._allowed():
                        self._wake_one()
                    break
                self._counts["waits"] += 1
                event = threading.Event()
                self._waiters.append(event.set)
            event.wait(None if math.isinf(wait) else wait)
            with self._lock:
                if event.set in self._waiters:
                    self._waiters.remove(event.set)
        _estimate.set(tokens)

    def release(self, tokens_used: int | None = None) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            if tokens_used is not None and self._tokens is not None:
                self._tokens.level += _estimate.get() - tokens_used
            if self._clock() - self._last_cut >= self.cut_interval_s:
                # additive increase, only once the cut has had time to show its effect
                self._window = min(
                    float(self.limits.max_concurrency), self._window + 1.0 / self._window
                )
                self._scale = min(1.0, self._scale + RATE_RECOVERY_STEP)
            self._wake_one()
        _estimate.set(0)

    def penalise(self, retry_after_s: float | None) -> None:
        with self._lock:
            now = self._clock()
            self._counts["penalties"] += 1
            if retry_after_s is not None and retry_after_s > 0:
                self._paused_until = max(self._paused_until, now + retry_after_s)
            if now - self._last_cut >= self.cut_interval_s:
                self._last_cut = now
                self._counts["cuts"] += 1
                self._window = max(1.0, self._window / 2.0)
                self._scale = max(MIN_SCALE, self._scale / 2.0)

    def stats(self) -> dict[str, float]:
        with self._lock:
            return {
                **self._counts,
                "in_flight": float(self._in_flight),
                "peak_in_flight": float(self._peak_in_flight),
                "allowed_concurrency": float(self._allowed()),
                "rate_scale": self._scale,
            }


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def limiter_key(base_url: str, model: str | None = None) -> str:
    """The key providers share a limiter under: base URL, plus the model when there is one."""
    base = base_url.rstrip("/")
    return f"{base}#{model}" if model else base


_registry: dict[str, RateLimiter] = {}
_registry_lock = threading.Lock()
_factory: Callable[[str, ProviderLimits], RateLimiter] | None = None


def set_limiter_factory(factory: Callable[[str, ProviderLimits], RateLimiter] | None) -> None:
    """Make limiters with ``factory`` from now on (None: ``AdaptiveLimiter``); limiters made
    before are forgotten, so every key gets one from the new factory."""
    global _factory
    with _registry_lock:
        _factory = factory
        _registry.clear()


def limiter_for(key: str, limits: ProviderLimits) -> RateLimiter:
    """The process-wide limiter of ``key``; the first caller's ``limits`` set it up."""
    with _registry_lock:
        found = _registry.get(key)
        if found is None:
            found = (_factory or AdaptiveLimiter)(key, limits)
            _registry[key] = found
        return found
