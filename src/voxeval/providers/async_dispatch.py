"""Call a component from an asyncio task: its native coroutine when it has one (remote
providers: ``achat``, ``atranscribe``, ``asynthesize``), else its blocking method in a
worker thread (embedded models: the CPU work stays off the event loop; the context, and so
the open request tallies and usage ledgers, is copied into the thread)."""

from __future__ import annotations

import asyncio
from typing import Any

ASYNC_NAMES = {"chat": "achat", "transcribe": "atranscribe", "synthesize": "asynthesize"}


async def call_async(component: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``component.<method>(*args, **kwargs)`` without blocking the event loop."""
    native = getattr(component, ASYNC_NAMES.get(method, "a" + method), None)
    if native is not None and asyncio.iscoroutinefunction(native):
        return await native(*args, **kwargs)
    return await asyncio.to_thread(getattr(component, method), *args, **kwargs)
