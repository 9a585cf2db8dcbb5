"""Provider rate limits shared by every Ray worker of a run.

One named, detached actor per (run, provider key) holds the limits of that provider: the
requests and tokens sent in the last minute (a sliding window, so no 60-second span ever sees
more than the configured amount) and an AIMD concurrency limit (halved on a 429, grown by
1/limit per finished request up to the configured ceiling). Workers lease slots from it; a
worker asks for as many slots as it has requests waiting (up to ``batch``) in one round trip,
and finished requests are reported without waiting for an answer.

Workers call ``install_ray_limiters``, which hands ``ray_limiter`` to
``voxeval.providers.rate_limits.set_limiter_factory``, so every ``limiter_for(key, limits)``
in a worker (each provider's endpoint asks it for its limiter) returns a client of the run's
shared actor instead of a per-process ``AdaptiveLimiter``. The client speaks the same
``RateLimiter`` protocol, including ``acquire_blocking`` for providers called from threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from voxeval.providers.rate_limits import ProviderLimits, set_limiter_factory

WINDOW_S = 60.0
NAMESPACE = "voxeval"
# Without a configured concurrency the AIMD limit still needs a ceiling to grow back to.
UNBOUNDED_CONCURRENCY = 1024
# How long a lease waits at the actor for a slot before answering "none yet".
LEASE_WAIT_S = 0.5
# Pause after a 429 that carried no Retry-After.
DEFAULT_PENALTY_S = 1.0


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


class LimitActor:
    """The Ray actor around ``LimitState`` (async: a waiting lease costs no thread)."""

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


_estimate: contextvars.ContextVar[int] = contextvars.ContextVar("voxeval_lease_tokens", default=0)


class RayRateLimiter:
    """A worker's client of one provider's ``LimitActor`` (the ``RateLimiter`` protocol of
    ``voxeval.providers.rate_limits``). Thread-safe; usable from any event loop."""

    def __init__(self, actor: Any, batch: int = 4) -> None:
        self._actor = actor
        self._batch = max(1, batch)
        self._lock = threading.Lock()
        self._spare = 0  # leased, not yet handed to a request
        self._waiting = 0  # requests waiting for a slot
        self._asked = 0  # slots asked for in leases not answered yet
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
                    # one lease in flight per process: requests arriving meanwhile wait
                    # for the next one, which asks for all of them (up to the batch)
                    want = min(self._batch, self._waiting) if self._asked == 0 else 0
                    if want > 0:
                        self._asked += want
                        self.round_trips += 1
                if want <= 0:
                    await asyncio.sleep(0.005)
                    continue
                ref = self._actor.lease.remote(want, tokens)
                try:
                    granted = int(await ref)
                except asyncio.CancelledError:
                    self._give_back_when_answered(ref)  # a timed-out caller must not leak slots
                    raise
                finally:
                    with self._lock:
                        self._asked -= want
                with self._lock:
                    self._spare += granted
        finally:
            with self._lock:
                self._waiting -= 1
                excess = self._spare - self._waiting
                if excess > 0:
                    self._spare -= excess
            if excess > 0:  # nobody here needs them: other workers may
                self._actor.give_back.remote(0, excess, 0)

    def acquire_blocking(self, tokens: int = 0) -> None:
        """``acquire`` for a thread (a provider called synchronously): the calling thread
        blocks on the actor's answer; the estimate is kept in this thread's context so
        ``release`` from the same thread corrects it."""
        ray = _ray()
        while True:
            with self._lock:
                if self._take_spare(tokens):
                    return
                self.round_trips += 1
            if int(ray.get(self._actor.lease.remote(1, tokens))) > 0:
                _estimate.set(tokens)  # the slot is this thread's: no other request sees it
                return

    def _give_back_when_answered(self, ref: Any) -> None:
        def answered(future: Any) -> None:
            if future.exception() is None and int(future.result()) > 0:
                self._actor.give_back.remote(0, int(future.result()), 0)

        ref.future().add_done_callback(answered)

    def release(self, tokens_used: int | None = None) -> None:
        correction = 0 if tokens_used is None else int(tokens_used) - _estimate.get()
        _estimate.set(0)
        self._actor.give_back.remote(1, 0, correction)  # no need to wait for the answer

    def penalise(self, retry_after_s: float | None) -> None:
        self._actor.penalise.remote(retry_after_s)

    def stats(self) -> dict[str, float]:
        found = _ray().get(self._actor.stats.remote(), timeout=10)
        return {**found, "lease_round_trips": float(self.round_trips)}


def _ray() -> Any:
    return importlib.import_module("ray")  # the scale extra; only workers and drivers use it


def actor_name(run_id: str, key: str) -> str:
    return f"{run_id}/limits/{key}"


_actor_class: Any = None
_clients: dict[str, RayRateLimiter] = {}
_clients_lock = threading.Lock()


def limit_actor(run_id: str, key: str, limits: LimitValues) -> Any:
    """The run's actor for provider ``key``, created by the first worker that asks
    (detached: it outlives the worker that created it; ``kill_run_limiters`` ends it)."""
    ray = _ray()
    global _actor_class
    if _actor_class is None:
        _actor_class = ray.remote(num_cpus=0, max_concurrency=1000)(LimitActor)
    return _actor_class.options(
        name=actor_name(run_id, key),
        namespace=NAMESPACE,
        lifetime="detached",
        get_if_exists=True,
    ).remote(asdict(limits))


def ray_limiter(
    run_id: str, key: str, limits: ProviderLimits | LimitValues, batch: int = 4
) -> RayRateLimiter:
    """One client per (run, key) in this process."""
    name = actor_name(run_id, key)
    with _clients_lock:
        if name not in _clients:
            actor = limit_actor(run_id, key, LimitValues.of(limits))
            _clients[name] = RayRateLimiter(actor, batch)
        return _clients[name]


def install_ray_limiters(run_id: str, batch: int) -> None:
    """Make ``limiter_for`` of this process hand out the run's shared limiters (limiters
    made before are forgotten, so no provider keeps a private one)."""
    set_limiter_factory(lambda key, limits: ray_limiter(run_id, key, limits, batch))


def kill_run_limiters(run_id: str) -> int:
    """End the limit actors of ``run_id`` (the driver, when the run's units are done)."""
    ray = _ray()
    prefix = actor_name(run_id, "")
    killed = 0
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry.get("namespace") != NAMESPACE or not str(entry.get("name", "")).startswith(prefix):
            continue
        try:
            ray.kill(ray.get_actor(entry["name"], namespace=NAMESPACE))
            killed += 1
        except ValueError:
            pass  # already gone
    with _clients_lock:
        for name in [n for n in _clients if n.startswith(prefix)]:
            del _clients[name]
    return killed
