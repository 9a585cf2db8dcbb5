"""Per-thread stacks of open collectors (request tallies, usage ledgers).

A collector is opened for a block of code and sees what the calling thread does inside it,
including inside nested blocks; every thread has its own stack, so concurrent work is never
counted in another thread's collector.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class ThreadStack(Generic[T]):
    """The collectors open on the current thread, outermost first."""

    def __init__(self) -> None:
        self._local = threading.local()

    def items(self) -> list[T]:
        stack: list[T] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = []
            self._local.stack = stack
        return stack

    @contextmanager
    def opened(self, collector: T) -> Iterator[T]:
        """``collector`` on this thread's stack for the block."""
        stack = self.items()
        stack.append(collector)
        try:
            yield collector
        finally:
            # by identity: collectors are often dataclasses, and an equal one may be open outside
            del stack[next(i for i, item in enumerate(stack) if item is collector)]
