"""The event loop a unit pass runs on: two thread pools (short CPU work; blocking calls),
Ctrl-C handled gracefully on the main thread, and the garbage collector tuned for the pass."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from voxeval.providers.async_dispatch import set_blocking_executor
from voxeval.providers.http_clients import close_async_clients

T = TypeVar("T")

# Threads for CPU work: more only contend for the GIL (sqlite, file I/O and the embedded
# models release it, so a few threads still overlap them).
CPU_THREADS = 4

# Allocations between two collections of the youngest generation during a pass (Python's
# default: 700). A young collection costs about the same whatever the threshold (it visits
# what the units in flight hold), so collecting 14 times less often cut the collector's time
# in a 1,024-unit `http` run at 64 from 150-200 ms to 83 ms (bench, gc.callbacks), at a pause
# of ~8 ms per collection. Cycles are still collected; only later.
YOUNG_COLLECTION_EVERY = 10_000


def unit_loop(
    main: Coroutine[Any, Any, T],
    *,
    workers: int,
    on_interrupt: Callable[[BaseException], None] | None = None,
) -> T:
    """Run ``main`` on a fresh event loop with two thread pools: ``CPU_THREADS`` for short
    CPU work (``asyncio.to_thread``: scoring, file writes, embedded models) and ``workers``
    for blocking calls (``run_blocking``: protocols and systems without an async path). On the
    main thread, the first Ctrl-C calls ``on_interrupt`` (units in flight finish) and a second
    one exits at once.

    Called where an event loop already runs on this thread (a notebook, a test session that
    drives a browser through Playwright's sync API), the loop gets a thread of its own: a
    second loop cannot run on a thread that has one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _unit_loop_here(main, workers=workers, on_interrupt=on_interrupt)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(_unit_loop_here(main, workers=workers, on_interrupt=on_interrupt))
        except BaseException as exc:  # handed to the caller's thread below
            errors.append(exc)

    thread = threading.Thread(target=run, name="voxeval-units")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def _unit_loop_here(
    main: Coroutine[Any, Any, T],
    *,
    workers: int,
    on_interrupt: Callable[[BaseException], None] | None = None,
) -> T:
    async def wrapped() -> T:
        loop = asyncio.get_running_loop()
        presses = 0

        def on_sigint() -> None:
            nonlocal presses
            presses += 1
            if presses > 1 or on_interrupt is None:
                os._exit(130)  # second Ctrl-C: worker threads cannot be stopped otherwise
            on_interrupt(KeyboardInterrupt())

        # Event loops take signal handlers on POSIX, in the main thread only; elsewhere
        # (Windows, a loop on its own thread) Ctrl-C keeps Python's default, a
        # KeyboardInterrupt, without the graceful first press.
        handled = os.name == "posix" and threading.current_thread() is threading.main_thread()
        if handled:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await main
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGINT)
            await close_async_clients()

    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        cpu = ThreadPoolExecutor(
            max_workers=min(max(1, workers), CPU_THREADS), thread_name_prefix="cpu"
        )
        loop.set_default_executor(cpu)
        blocking = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="unit")
        set_blocking_executor(loop, blocking)
        try:
            with _collector_tuned_for_a_pass():
                return runner.run(wrapped())
        finally:
            blocking.shutdown(wait=True)


_passes_running = 0
_passes_lock = threading.Lock()
_saved_thresholds: tuple[int, ...] = ()


@contextmanager
def _collector_tuned_for_a_pass() -> Iterator[None]:
    """The garbage collector's settings for unit passes (shared by passes that overlap, e.g.
    on two threads: the first one in sets them, the last one out restores them).

    What is alive when a pass starts (modules, models, the plan) outlives it: frozen, it is
    left out of the collector's full passes, which otherwise stall the loop ~0.1 s each. Young
    objects are collected every ``YOUNG_COLLECTION_EVERY`` allocations."""
    global _passes_running, _saved_thresholds
    with _passes_lock:
        _passes_running += 1
        if _passes_running == 1:
            gc.freeze()
            _saved_thresholds = gc.get_threshold()
            gc.set_threshold(YOUNG_COLLECTION_EVERY, *_saved_thresholds[1:])
    try:
        yield
    finally:
        with _passes_lock:
            _passes_running -= 1
            if _passes_running == 0:
                gc.set_threshold(*_saved_thresholds)
                gc.unfreeze()
