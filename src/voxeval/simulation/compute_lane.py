"""Timing of model compute that does not depend on how many calls run beside it.

The embedded components (Whisper via CTranslate2, SmolLM2 via llama.cpp, Piper and Silero via
onnxruntime) each use several native threads, so a thread's CPU time misses most of their work
and their wall time grows with every other call competing for the same cores. A
``ComputeLane`` serialises that work instead: a section runs only while it holds one of the
lane's slots, and its time is counted from the moment it got the slot. Eight calls in parallel
then queue for the lane rather than share the cores, and each section is timed as if it ran
alone. The wait for the slot is never counted.

Limits: work outside the lane (other processes, scoring threads, the engine's own bookkeeping)
still competes for the cores while a section runs; the figure is independent of our own
parallel calls, not of the machine's load.

A thread that already holds a slot runs nested sections directly (no second slot, no double
count)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class _LaneDepth(threading.local):
    """The current thread's nesting in one lane: 0 outside it, 1 while it holds a slot. A
    ``threading.local`` subclass runs ``__init__`` in each thread, so every thread starts at 0."""

    def __init__(self) -> None:
        self.depth = 0


class ComputeLane:
    """``slots`` sections may run at once (1: model compute is strictly serial)."""

    def __init__(self, slots: int = 1) -> None:
        if slots < 1:
            raise ValueError(f"a compute lane needs at least one slot, got {slots}")
        self.slots = slots
        # a plain lock when there is one slot: the engine enters the lane for every block of
        # frames, and the C lock costs far less than the semaphore's Python-level condition
        self._slots: threading.Lock | threading.BoundedSemaphore = (
            threading.Lock() if slots == 1 else threading.BoundedSemaphore(slots)
        )
        self._held = _LaneDepth()

    def holding(self) -> bool:
        """True while the current thread runs a section of this lane."""
        return self._held.depth > 0

    def run(self, fn: Callable[[*Ts], T], *args: *Ts) -> tuple[T, float]:
        """``fn(*args)`` and the seconds it ran after taking a slot (the wait excluded)."""
        if self.holding():
            started = time.perf_counter()
            return fn(*args), time.perf_counter() - started
        with self._slots:
            self._held.depth = 1
            started = time.perf_counter()
            try:
                result = fn(*args)
            finally:
                spent = time.perf_counter() - started
                self._held.depth = 0
        return result, spent


# The lane every call in this process shares by default (one slot: on the 2-core machines
# voxeval targets, one embedded model already keeps both cores busy).
SHARED_LANE = ComputeLane(1)


def unlaned(fn: Callable[[*Ts], T], *args: *Ts) -> tuple[T, float]:
    """``fn(*args)`` timed without a lane (remote or wall-clock work: waiting is its latency)."""
    started = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - started
