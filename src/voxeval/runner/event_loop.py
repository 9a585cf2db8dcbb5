"""The event loop a unit pass runs on: two thread pools (short CPU work; blocking calls),
Ctrl-C handled gracefully on the main thread, and the garbage collector tuned for the pass."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from voxeval.providers.http.http_clients import close_async_clients
from voxeval.providers.runtime.async_dispatch import set_blocking_executor
from voxeval.runner.collector_pause import collector_tuned

T = TypeVar("T")

# Threads for CPU work: more only contend for the GIL (sqlite, file I/O and the embedded
# models release it, so a few threads still overlap them).
CPU_THREADS = 4


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
            with collector_tuned():
                return runner.run(wrapped())
        finally:
            blocking.shutdown(wait=True)
