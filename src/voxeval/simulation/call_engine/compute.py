"""Timing the in-process compute of one call (the agent's work, our renderers and callers),
and keeping failures of our side apart from the agent's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

from voxeval.errors import ConfigError, HarnessFault, ProviderUnavailable
from voxeval.simulation.compute_lane import ComputeLane, unlaned

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class CallCompute:
    """Runs sections in the compute ``lane`` (None: plain wall time) and sums their seconds.
    ``agent_laned``: the agent's own sections run in the lane too (not for an agent that
    reports its latency or runs on the wall clock: its waiting is its latency)."""

    def __init__(self, lane: ComputeLane | None, agent_laned: bool) -> None:
        self.lane = lane
        self.agent_laned = agent_laned
        self.compute_s = 0.0  # every timed component section, summed (engine overhead bench)

    def timed(self, fn: Callable[[*Ts], T], *args: *Ts, agent: bool = False) -> tuple[T, float]:
        """``fn(*args)`` and its compute seconds (in the lane unless an unlaned agent)."""
        laned = self.agent_laned if agent else self.lane is not None
        if laned and self.lane is not None:
            result, spent = self.lane.run(fn, *args)
        else:
            result, spent = unlaned(fn, *args)
        self.compute_s += spent
        return result, spent

    def laned(self, fn: Callable[[*Ts], T], *args: *Ts) -> T:
        return self.timed(fn, *args)[0]


def ours(component: str, what: str, fn: Callable[[*Ts], T], *args: *Ts) -> T:
    """Call a part on our side of the call (caller, renderer, perturbation): its failure is
    a ``HarnessFault`` naming ``component``, never the agent's fault."""
    try:
        return fn(*args)
    except (HarnessFault, ConfigError, ProviderUnavailable):
        raise
    except Exception as exc:
        raise HarnessFault(f"{what}: {type(exc).__name__}: {exc}", component=component) from exc
