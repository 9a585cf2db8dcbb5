"""Python's cyclic garbage collector, tuned while a run or a unit pass is under way.

What is alive when a run starts (modules, SciPy, SQLAlchemy, models, the suite: a few hundred
thousand objects) outlives it. The collector's full passes walk all of it whenever the
objects that survived earlier passes grow by a quarter, which a run's records do every few
hundred units: 0.1-0.25 s a pass, with the GIL held, so the event loop and every thread
stall. ``gc.freeze()`` leaves those objects out of every pass.

Young objects are collected every ``YOUNG_COLLECTION_EVERY`` allocations (Python's default
is 700). A young collection costs about the same whatever the threshold (it visits what the
units in flight hold), so collecting 14 times less often cut the collector's time in a
1,024-unit `http` run at 64 from 150-200 ms to 83 ms (bench, gc.callbacks), at a pause of
~8 ms per collection. In a 400-item single-turn run (``bench/overhead.py``), planning and the
report ran 460 young and 3 full collections, ~0.45 s; with the run tuned, 30 young and no full
one, ~0.06 s. Cycles made meanwhile are still collected, only later.

Runs and passes that overlap (nested, or on two threads) share the tuning: the first one in
sets it, the last one out restores the thresholds and returns the frozen objects.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_COLLECTION_EVERY = 10_000

_lock = threading.Lock()
_running = 0
_saved_thresholds: tuple[int, ...] = ()


@contextmanager
def collector_tuned() -> Iterator[None]:
    """Within the block, what existed on entry is frozen and young objects are collected
    every ``YOUNG_COLLECTION_EVERY`` allocations (see the module docstring)."""
    global _running, _saved_thresholds
    with _lock:
        _running += 1
        if _running == 1:
            gc.freeze()
            _saved_thresholds = gc.get_threshold()
            gc.set_threshold(YOUNG_COLLECTION_EVERY, *_saved_thresholds[1:])
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_saved_thresholds)
                gc.unfreeze()
