"""Call blocking code from an asyncio task without stalling the event loop.

Two kinds of thread work: short CPU work (file writes, scoring, embedded models) goes to the
loop's default executor (``asyncio.to_thread``), a small pool, because Python threads doing
CPU work only contend for the GIL; a *blocking* call that mostly waits (a protocol or system
with no async path, e.g. a live call) goes to ``run_blocking``'s pool, sized to the run's
concurrency, so such units still run ``concurrency`` at a time. Both copy the context, so
open request tallies and usage ledgers follow the work into the thread.

``call_async`` calls a component's native coroutine when it has one (remote providers:
``achat``, ``atranscribe``, ``asynthesize``), else its blocking method in a thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
CallParams = ParamSpec("CallParams")

ASYNC_NAMES = {"chat": "achat", "transcribe": "atranscribe", "synthesize": "asynthesize"}

_blocking_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Executor]
_blocking_pools = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def set_blocking_executor(loop: asyncio.AbstractEventLoop, executor: Executor) -> None:
    """The pool ``run_blocking`` uses on ``loop`` (the runner sets one per run loop)."""
    with _lock:
        _blocking_pools[loop] = executor


async def run_blocking(
    fn: Callable[CallParams, T], *args: CallParams.args, **kwargs: CallParams.kwargs
) -> T:
    """``fn(*args, **kwargs)`` in the loop's blocking pool (the default executor when none
    was set), in a copy of the current context."""
    loop = asyncio.get_running_loop()
    with _lock:
        executor = _blocking_pools.get(loop)
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(executor, call)


async def await_future(future: Future[T]) -> T:
    """The result of a thread's ``future``; one already settled is read at once (wrapping it
    would still cost a wake-up of the event loop through its self-pipe)."""
    if future.done():
        return future.result()
    return await asyncio.wrap_future(future)


async def call_async(component: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``component.<method>(*args, **kwargs)`` without blocking the event loop."""
    native = getattr(component, ASYNC_NAMES.get(method, "a" + method), None)
    if native is not None and asyncio.iscoroutinefunction(native):
        return await native(*args, **kwargs)
    return await run_blocking(getattr(component, method), *args, **kwargs)
