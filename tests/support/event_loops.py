"""Running a coroutine from a test, whatever the main thread carries: in a full session the
main thread may hold Playwright's event loop (the session-scoped browser), where
``asyncio.run`` is refused. The coroutine runs on a fresh loop on a thread of its own."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine(main: Callable[[], Coroutine[Any, Any, T]], timeout_s: float = 120) -> T:
    """``asyncio.run(main())`` on a thread of its own; its result, or what it raised."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(asyncio.run(main()))
        except BaseException as exc:  # handed to the test's thread below
            errors.append(exc)

    thread = threading.Thread(target=run, name="test-loop")
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"the coroutine did not finish within {timeout_s:g} s")
    if errors:
        raise errors[0]
    return results[0]
