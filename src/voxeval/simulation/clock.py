"""Clocks for the call engine.

The engine computes every event time itself; the clock only decides whether reaching an event
time costs real time. ``VirtualClock`` jumps (a five-minute call runs in seconds); ``WallClock``
sleeps until the event time so that external real-time systems see a real-time caller.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    kind: str

    def now(self) -> float:
        """Seconds since the call started."""
        ...

    def wait_until(self, t: float) -> None:
        """Let the call reach time ``t`` (never goes backwards)."""
        ...


class VirtualClock:
    kind = "virtual"

    def __init__(self) -> None:
        self._t = 0.0

    def now(self) -> float:
        return self._t

    def wait_until(self, t: float) -> None:
        self._t = max(self._t, t)


class WallClock:
    kind = "wall"

    def __init__(self) -> None:
        self._t0 = time.perf_counter()

    def now(self) -> float:
        return time.perf_counter() - self._t0

    def wait_until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            time.sleep(delay)


def make_clock(kind: str) -> Clock:
    if kind == "virtual":
        return VirtualClock()
    if kind == "wall":
        return WallClock()
    raise ValueError(f"unknown clock {kind!r}; expected 'virtual' or 'wall'")
