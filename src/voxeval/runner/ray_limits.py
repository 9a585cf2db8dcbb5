"""Provider rate limits shared by every Ray worker of a run.

The run's limits of each provider live in one named, detached actor per (run, provider key)
(a ``LimitHost``, see ``shared_limits``). Workers call ``install_ray_limiters``, which hands
``ray_limiter`` to ``voxeval.providers.usage.rate_limits.set_limiter_factory``, so every
``limiter_for(key, limits)`` in a worker (each provider's endpoint asks it for its limiter)
returns a ``LeasedRateLimiter`` over that actor instead of a per-process
``AdaptiveLimiter``.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from concurrent.futures import Future
from dataclasses import asdict
from types import ModuleType
from typing import TYPE_CHECKING, cast

from voxeval.providers.usage.rate_limits import ProviderLimits, set_limiter_factory
from voxeval.runner.shared_limits import LeasedRateLimiter, LimitHost, LimitValues

if TYPE_CHECKING:
    from ray import ObjectRef
    from ray.actor import ActorClass, ActorHandle

NAMESPACE = "voxeval"
STATS_TIMEOUT_S = 60.0


class RayLeaseChannel:
    """A ``LeaseChannel`` to a ``LimitHost`` actor."""

    def __init__(self, actor: ActorHandle[LimitHost]) -> None:
        self._actor = actor

    async def lease(self, want: int, tokens_each: int) -> int:
        ref: ObjectRef[int] = self._actor.lease.remote(want, tokens_each)
        try:
            return int(await ref)
        except asyncio.CancelledError:
            self._give_back_when_answered(ref)  # a timed-out caller must not leak slots
            raise

    def lease_blocking(self, want: int, tokens_each: int) -> int:
        return int(_ray().get(self._actor.lease.remote(want, tokens_each)))

    def _give_back_when_answered(self, ref: ObjectRef[int]) -> None:
        def answered(future: Future[int]) -> None:
            if future.exception() is None and int(future.result()) > 0:
                self._actor.give_back.remote(0, int(future.result()), 0)

        ref.future().add_done_callback(answered)

    def give_back(self, finished: int, unused: int, token_correction: int) -> None:
        self._actor.give_back.remote(finished, unused, token_correction)

    def penalise(self, retry_after_s: float | None) -> None:
        self._actor.penalise.remote(retry_after_s)

    def stats(self) -> dict[str, float]:
        # The first call may wait for the actor's worker process to start: seconds on an idle
        # machine, over 10 s on a loaded one (seen with the test suite on both cores).
        return dict(_ray().get(self._actor.stats.remote(), timeout=STATS_TIMEOUT_S))


def _ray() -> ModuleType:
    return importlib.import_module("ray")  # the scale extra; only workers and drivers use it


def actor_name(run_id: str, key: str) -> str:
    return f"{run_id}/limits/{key}"


_actor_class: ActorClass[LimitHost] | None = None
_clients: dict[str, LeasedRateLimiter] = {}
_clients_lock = threading.Lock()


def limit_actor(run_id: str, key: str, limits: LimitValues) -> ActorHandle[LimitHost]:
    """The run's actor for provider ``key``, created by the first worker that asks
    (detached: it outlives the worker that created it; ``kill_run_limiters`` ends it)."""
    ray = _ray()
    global _actor_class
    if _actor_class is None:
        _actor_class = ray.remote(num_cpus=0, max_concurrency=1000)(LimitHost)
    return cast(  # Ray's stubs type ``options(...).remote`` loosely
        "ActorHandle[LimitHost]",
        _actor_class.options(
            name=actor_name(run_id, key),
            namespace=NAMESPACE,
            lifetime="detached",
            get_if_exists=True,
        ).remote(asdict(limits)),
    )


def ray_limiter(
    run_id: str, key: str, limits: ProviderLimits | LimitValues, batch: int = 4
) -> LeasedRateLimiter:
    """One client per (run, key) in this process."""
    name = actor_name(run_id, key)
    with _clients_lock:
        if name not in _clients:
            actor = limit_actor(run_id, key, LimitValues.of(limits))
            _clients[name] = LeasedRateLimiter(RayLeaseChannel(actor), batch)
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
