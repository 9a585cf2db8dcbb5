"""Provider rate limits shared by the workers of a run (Ray actors or worker processes).

One host per (run, provider key) holds that provider's limits: the requests and tokens sent
in the last minute (a sliding window, so no 60-second span ever sees more than the
configured amount) and an AIMD concurrency limit (halved on a 429, grown by 1/limit per
finished request up to the configured ceiling). Workers lease slots from it through a
``LeaseChannel``: a worker asks for as many slots as it has requests waiting (up to
``batch``) in one round trip, and finished requests are reported without waiting for an
answer. ``LeasedRateLimiter`` is a worker's client; it speaks the ``RateLimiter`` protocol
of ``voxeval.providers.usage.rate_limits``, including ``acquire_blocking`` for providers called
from threads. Where the host lives and how a lease travels is the executor's business
(``ray_limits``: a named Ray actor; ``process_executor``: the driver process).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from voxeval.providers.usage.rate_limits import ProviderLimits

WINDOW_S = 60.0
# Without a configured concurrency the AIMD limit still needs a ceiling to grow back to.
UNBOUNDED_CONCURRENCY = 1024
# How long a lease waits at the host for a slot before answering "none yet".
LEASE_WAIT_S = 0.5
# Pause after a 429 that carried no Retry-After.
DEFAULT_PENALTY_S = 1.0
# A worker leases a whole batch per round trip and keeps the slots its waiting requests did
# not take for this long, so its next requests start without a round trip; then they go back
# to the host (counted as never used) for other workers.
UNUSED_HOLD_S = 0.05


@dataclass(frozen=True)
class LimitValues:
    """The three limits of one provider (None = no limit), as sent to the actor."""

    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    @classmethod
    def of(cls, limits: ProviderLimits | LimitValues) -> LimitValues:
        """From the provider's ``ProviderLimits`` (or already these values)."""
        if isinstance(limits, LimitValues):
            return limits
        return cls(
            max_concurrency=limits.max_concurrency,
            requests_per_minute=limits.requests_per_minute,
            tokens_per_minute=limits.tokens_per_minute,
        )


class LimitState:
    """The bookkeeping of one provider's limits (no Ray: the actor wraps it)."""

    def __init__(self, limits: LimitValues, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self.ceiling = limits.max_concurrency or UNBOUNDED_CONCURRENCY
        self.limit = float(self.ceiling)  # AIMD: the concurrency allowed right now
        self.in_use = 0
        self.paused_until = 0.0
        self._requests: deque[float] = deque()  # grant times within the window
        self._tokens: deque[tuple[float, int]] = deque()  # (time, tokens) within the window
        self._token_sum = 0
        self.granted_total = 0
        self.penalties = 0
        self.max_in_use = 0

    def _expire(self, now: float) -> None:
        while self._requests and self._requests[0] <= now - WINDOW_S:
            self._requests.popleft()
        while self._tokens and self._tokens[0][0] <= now - WINDOW_S:
            self._token_sum -= self._tokens.popleft()[1]

    def grantable(self, want: int, tokens_each: int) -> tuple[int, float]:
        """How many of ``want`` slots could be granted now, and else the seconds until the
        earliest moment one could be (0 = when a slot is given back)."""
        now = self._clock()
        self._expire(now)
        if now < self.paused_until:
            return 0, self.paused_until - now
        room = math.floor(self.limit) - self.in_use
        if room <= 0:
            return 0, 0.0
        n = min(want, room)
        rpm = self.limits.requests_per_minute
        if rpm is not None:
            n = min(n, math.floor(rpm) - len(self._requests))
        tpm = self.limits.tokens_per_minute
        if tpm is not None and tokens_each > 0:
            n = min(n, math.floor((tpm - self._token_sum) / tokens_each))
        if n > 0:
            return n, 0.0
        waits = []
        if rpm is not None and self._requests and len(self._requests) >= math.floor(rpm):
            waits.append(self._requests[0] + WINDOW_S - now)
        if tpm is not None and self._tokens:
            waits.append(self._tokens[0][0] + WINDOW_S - now)
        return 0, max(0.001, min(waits)) if waits else 1.0

    def lease(self, want: int, tokens_each: int = 0) -> int:
        """Grant up to ``want`` slots (each one request of ``tokens_each`` estimated tokens)."""
        n, _ = self.grantable(want, tokens_each)
        if n <= 0:
            return 0
        now = self._clock()
        self.in_use += n
        self.max_in_use = max(self.max_in_use, self.in_use)
        self.granted_total += n
        self._requests.extend([now] * n)
        if tokens_each > 0:
            self._tokens.append((now, n * tokens_each))
            self._token_sum += n * tokens_each
        return n

    def give_back(self, finished: int = 0, unused: int = 0, token_correction: int = 0) -> None:
        """``finished`` requests are done (each grows the AIMD limit); ``unused`` leased slots
        were never used (their request is not counted); ``token_correction``: tokens used
        minus the estimates."""
        now = self._clock()
        self.in_use = max(0, self.in_use - finished - unused)
        for _ in range(min(unused, len(self._requests))):
            self._requests.pop()  # the newest grants are the unused ones
        if token_correction:
            self._tokens.append((now, token_correction))
            self._token_sum += token_correction
        for _ in range(finished):
            self.limit = min(float(self.ceiling), self.limit + 1.0 / max(self.limit, 1.0))

    def penalise(self, retry_after_s: float | None) -> None:
        """A 429: halve the concurrency and pause new grants for ``retry_after_s``."""
        self.penalties += 1
        self.limit = max(1.0, math.floor(self.limit / 2))
        pause = DEFAULT_PENALTY_S if retry_after_s is None else max(0.0, retry_after_s)
        self.paused_until = max(self.paused_until, self._clock() + pause)

    def stats(self) -> dict[str, float]:
        now = self._clock()
        self._expire(now)
        return {
            "limit": self.limit,
            "in_use": float(self.in_use),
            "max_in_use": float(self.max_in_use),
            "granted": float(self.granted_total),
            "requests_last_minute": float(len(self._requests)),
            "tokens_last_minute": float(self._token_sum),
            "penalties": float(self.penalties),
        }


class LimitHost:
    """``LimitState`` behind async calls, where the run's limits live (a Ray actor, or the
    driver of ``executor: processes``): a lease waiting for a slot holds no thread."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self.state = LimitState(LimitValues(**limits))
        self._changed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def lease(self, want: int, tokens_each: int = 0, wait_s: float = LEASE_WAIT_S) -> int:
        """Up to ``want`` slots; waits up to ``wait_s`` for one before answering 0."""
        deadline = time.monotonic() + wait_s
        while True:
            n, retry_in = self.state.grantable(want, tokens_each)
            if n > 0:
                return self.state.lease(want, tokens_each)
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            event = self._event()
            event.clear()
            timeout = min(left, retry_in) if retry_in > 0 else left
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout)

    async def give_back(
        self, finished: int = 0, unused: int = 0, token_correction: int = 0
    ) -> None:
        self.state.give_back(finished, unused, token_correction)
        self._event().set()

    async def penalise(self, retry_after_s: float | None) -> None:
        self.state.penalise(retry_after_s)

    async def stats(self) -> dict[str, float]:
        return self.state.stats()


class LeaseChannel(Protocol):
    """How a worker reaches the host of one provider's limits. ``lease`` answers how many of
    ``want`` slots were granted (0: none within the host's wait); when the caller is
    cancelled before the answer, the channel gives back whatever the answer grants. The
    other calls do not wait for an answer, except ``lease_blocking`` and ``stats``."""

    async def lease(self, want: int, tokens_each: int) -> int: ...

    def lease_blocking(self, want: int, tokens_each: int) -> int: ...

    def give_back(self, finished: int, unused: int, token_correction: int) -> None: ...

    def penalise(self, retry_after_s: float | None) -> None: ...

    def stats(self) -> dict[str, float]: ...


_estimate: contextvars.ContextVar[int] = contextvars.ContextVar("voxeval_lease_tokens", default=0)


class LeasedRateLimiter:
    """A worker's client of one provider's shared limits (the ``RateLimiter`` protocol).
    Thread-safe; usable from any event loop."""

    def __init__(
        self, channel: LeaseChannel, batch: int = 4, hold_s: float = UNUSED_HOLD_S
    ) -> None:
        self._channel = channel
        self._batch = max(1, batch)
        self._hold_s = hold_s
        self._lock = threading.Lock()
        self._spare = 0  # leased, not yet handed to a request
        self._waiting = 0  # requests waiting for a slot
        self._answered: Future[None] | None = None  # done when the lease in flight is
        self._return_scheduled = False
        self.round_trips = 0

    def _take_spare(self, tokens: int) -> bool:
        if self._spare <= 0:
            return False
        self._spare -= 1
        _estimate.set(tokens)
        return True

    async def acquire(self, tokens: int = 0) -> None:
        with self._lock:
            if self._take_spare(tokens):
                return
            self._waiting += 1
        try:
            while True:
                with self._lock:
                    if self._take_spare(tokens):
                        return
                    # one lease in flight per process: requests arriving meanwhile wait for
                    # its answer, then the next lease asks for all of them (up to the batch)
                    answered = self._answered
                    if answered is None:
                        want = self._batch  # what the waiting requests do not use is kept
                        self._answered = Future()
                        self.round_trips += 1
                if answered is not None:
                    # shielded: a request given up must not cancel the others' wait
                    await asyncio.shield(asyncio.wrap_future(answered))
                    continue
                await self._lease(want, tokens)
        finally:
            with self._lock:
                self._waiting -= 1
                excess = max(0, self._spare - self._waiting)
                give = max(0, excess - self._batch)  # keep a batch for the next requests
                self._spare -= give
                schedule = excess > give and not self._return_scheduled
                self._return_scheduled = self._return_scheduled or schedule
            if give > 0:  # nobody here needs them: other workers may
                self._channel.give_back(0, give, 0)
            if schedule:
                asyncio.get_running_loop().call_later(self._hold_s, self._return_unused)

    def _return_unused(self) -> None:
        """Give back the kept slots no request took within ``hold_s``."""
        with self._lock:
            self._return_scheduled = False
            unused = max(0, self._spare - self._waiting)
            self._spare -= unused
        if unused > 0:
            self._channel.give_back(0, unused, 0)

    async def _lease(self, want: int, tokens: int) -> None:
        """The process's one lease in flight; wakes the requests waiting for its answer."""
        granted = 0
        try:
            granted = await self._channel.lease(want, tokens)
        finally:  # cancelled: the channel gives back what the answer grants
            with self._lock:
                self._spare += granted
                answered, self._answered = self._answered, None
            if answered is not None and not answered.done():
                answered.set_result(None)

    def acquire_blocking(self, tokens: int = 0) -> None:
        """``acquire`` for a thread (a provider called synchronously): the calling thread
        blocks on the host's answer; the estimate is kept in this thread's context so
        ``release`` from the same thread corrects it."""
        while True:
            with self._lock:
                if self._take_spare(tokens):
                    return
                self.round_trips += 1
            if self._channel.lease_blocking(1, tokens) > 0:
                _estimate.set(tokens)  # the slot is this thread's: no other request sees it
                return

    def release(self, tokens_used: int | None = None) -> None:
        correction = 0 if tokens_used is None else int(tokens_used) - _estimate.get()
        _estimate.set(0)
        self._channel.give_back(1, 0, correction)  # no need to wait for the answer

    def penalise(self, retry_after_s: float | None) -> None:
        self._channel.penalise(retry_after_s)
        self._return_unused()  # a 429: keep nothing in reserve

    def stats(self) -> dict[str, float]:
        return {**self._channel.stats(), "lease_round_trips": float(self.round_trips)}
