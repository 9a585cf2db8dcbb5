"""Per-context stacks of open collectors (request tallies, usage ledgers).

A collector is opened for a block of code and sees what that block does, including inside
nested blocks. The stack lives in a ``contextvars.ContextVar``: it follows a unit across
``await`` points and into ``asyncio.to_thread`` (which copies the context), while concurrent
asyncio tasks and other threads each see only their own collectors. (A thread started
directly, or a plain thread-pool job, starts with an empty stack.)
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

_names = itertools.count()


class ThreadStack(Generic[T]):
    """The collectors open in the current context, outermost first. (The name is kept from
    the thread-local version; the stack is now per context.)"""

    def __init__(self) -> None:
        # The value is an immutable tuple: a task that copied the context can never change
        # the stack another task sees.
        self._var: contextvars.ContextVar[tuple[T, ...]] = contextvars.ContextVar(
            f"voxeval_collectors_{next(_names)}", default=()
        )

    def items(self) -> list[T]:
        return list(self._var.get())

    @contextmanager
    def opened(self, collector: T) -> Iterator[T]:
        """``collector`` on this context's stack for the block."""
        token = self._var.set((*self._var.get(), collector))
        try:
            yield collector
        finally:
            try:
                self._var.reset(token)
            except ValueError:
                # closed in another context than it was opened in (a generator resumed
                # elsewhere): drop it by identity, collectors are often equal dataclasses
                self._var.set(tuple(c for c in self._var.get() if c is not collector))
