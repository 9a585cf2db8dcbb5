"""An asyncio event loop on a virtual clock, stepped from another thread (docs/pipecat.md).

``VirtualTimeLoop.time()`` is a virtual second count that moves only when the loop has
nothing left to do: no ready callbacks, no job in an executor (``run_in_executor``,
``asyncio.to_thread``) and no socket read in flight. Then, and only then, time jumps to the
next timer, as long as that timer is not later than the limit the controlling thread set
(``settle``). So a pipeline's sleeps, timeouts and audio pacing take no real time, and its
model inference (in threads) or a loopback HTTP request takes no virtual time: the same input
gives the same timings whatever the machine's load.

Sockets: a reader registered on the selector counts as a read in flight (anyio, under httpx,
registers one only while it awaits data; asyncio's own streams keep one for the connection's
life). Waiting on one is bounded by ``io_wait_s`` of real time; a connection that stays
silent that long is taken as idle, so such a service's answers land at a virtual time that
depends on when they arrive (non-deterministic: said in the docs).
"""

from __future__ import annotations

import asyncio
import selectors
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, Unpack

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

JOB_POLL_S = 0.5  # real seconds between looks while a thread job runs (it wakes us anyway)


class _SteppedSelector(selectors.BaseSelector):
    """The loop's selector: real I/O, but a wait for a timer becomes a virtual jump."""

    def __init__(self, loop_ref: Callable[[], VirtualTimeLoop]) -> None:
        self._real = selectors.DefaultSelector()
        self._loop_ref = loop_ref

    def register(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: FileDescriptorLike) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Mapping[FileDescriptorLike, selectors.SelectorKey]:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self._loop_ref()
        if not loop.virtual:
            return self._real.select(timeout)
        if timeout is not None and timeout <= 0:  # callbacks are ready: just poll
            return self._real.select(0)
        return loop._wait(self._real, timeout)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """See the module docstring. Run it with ``run_forever`` in its own thread; drive it with
    ``settle(t)`` from one controlling thread."""

    def __init__(self, *, io_wait_s: float = 2.0) -> None:
        self.virtual = True  # False: an ordinary loop on the monotonic clock (``to_wall``)
        self._vt = 0.0
        self._limit = 0.0
        self._jobs = 0
        self._cond = threading.Condition()
        self._idle = False
        self._ticket = 0  # raised by the controller for each settle
        self._seen = 0  # the latest ticket the loop has run
        self._idle_ticket = -1  # the ticket seen when the loop last went idle
        self.io_wait_s = io_wait_s
        super().__init__(selector=_SteppedSelector(lambda: self))

    # ---------------------------------------------------------------- loop thread
    def time(self) -> float:
        return self._vt if self.virtual else time.monotonic()

    def to_wall(self) -> None:
        """From now on an ordinary loop on the real clock (on the loop's thread, before
        anything timed is scheduled: timers set on the virtual clock fall due at once)."""
        self.virtual = False

    def run_in_executor(  # the same call, counted
        self, executor: Executor | None, func: Callable[[Unpack[Ts]], T], *args: *Ts
    ) -> asyncio.Future[T]:
        future = super().run_in_executor(executor, func, *args)
        self._jobs += 1  # called on the loop's thread, as asyncio requires
        future.add_done_callback(self._job_done)
        return future

    def _job_done(self, _: asyncio.Future[T]) -> None:
        self._jobs -= 1

    def _reading(self, real: selectors.BaseSelector) -> bool:
        """A socket read is in flight (any registered reader but the loop's own wake-up)."""
        own = self._ssock.fileno()  # type: ignore[attr-defined]
        return any(
            key.fd != own and key.events & selectors.EVENT_READ for key in real.get_map().values()
        )

    def _wait(
        self, real: selectors.BaseSelector, timeout: float | None
    ) -> list[tuple[selectors.SelectorKey, int]]:
        """Nothing is ready: wait for work in flight in real time, else jump to the next timer
        (up to the limit), else report idle and sleep until the controller wakes us."""
        events = real.select(0)
        if events:
            return events
        if self._jobs > 0:
            return real.select(JOB_POLL_S)
        if self._reading(real):
            events = real.select(self.io_wait_s)
            if events:
                return events
        with self._cond:
            due = None if timeout is None else self._vt + timeout
            if due is not None and due <= self._limit:
                self._vt = due
                return []
            self._idle, self._idle_ticket = True, self._seen
            self._cond.notify_all()
        try:
            return real.select(None)
        finally:
            with self._cond:
                self._idle = False

    def _saw(self, ticket: int) -> None:
        with self._cond:
            self._seen = max(self._seen, ticket)

    # ---------------------------------------------------------------- controlling thread
    def settle(self, until: float, timeout_s: float) -> bool:
        """Run the loop until it is idle with no timer due by virtual time ``until``, then set
        the time to ``until`` (never backwards). False when it was still busy after
        ``timeout_s`` real seconds."""
        with self._cond:
            self._limit = max(self._limit, until)
            self._ticket += 1
            ticket = self._ticket
        self.call_soon_threadsafe(self._saw, ticket)
        with self._cond:
            done = self._cond.wait_for(
                lambda: self._idle and self._idle_ticket >= ticket, timeout=timeout_s
            )
            if done:
                self._vt = max(self._vt, until)
        return done

    def release(self) -> None:
        """Let time run freely from now on (for shutting down: timeouts then fire at once)."""
        with self._cond:
            self._limit = float("inf")
        self.call_soon_threadsafe(lambda: None)


__all__ = ["VirtualTimeLoop"]
