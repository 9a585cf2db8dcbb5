"""Call blocking code from an asyncio task without stalling the event loop.

Two kinds of thread work: short CPU work (file writes, scoring, embedded models) goes to the
loop's default executor (``asyncio.to_thread``), a small pool, because Python threads doing
CPU work only contend for the GIL; a *blocking* call that mostly waits (a protocol or system
with no async path, e.g. a live call) goes to ``run_blocking``'s pool, sized to the run's
concurrency, so such units still run ``concurrency`` at a time. Both copy the context, so
open request tallies and usage ledgers follow the work into the thread.

``transcribe_async``, ``chat_async`` and ``synthesize_async`` await a provider's native
coroutine twin when it has one (a remote provider: ``atranscribe``, ``achat``,
``asynthesize``, declared by the ``AsyncASR``/``AsyncLLM``/``AsyncTTS`` protocols), else run
its blocking method in a thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import ParamSpec, TypedDict, TypeVar, Unpack

from voxeval.audio import Audio
from voxeval.json_types import JSONObject, JSONReadObject
from voxeval.providers.base import (
    ASR,
    LLM,
    TTS,
    AsyncASR,
    AsyncLLM,
    AsyncTTS,
    ChatResponse,
    Message,
    Transcript,
)

T = TypeVar("T")
CallParams = ParamSpec("CallParams")


class TranscribeOptions(TypedDict, total=False):
    """The keyword options of ``ASR.transcribe`` (only those given are passed on)."""

    language: str | None
    beam_size: int
    temperature: float
    word_timestamps: bool
    seed: int | None


class ChatOptions(TypedDict, total=False):
    """The keyword options of ``LLM.chat`` (only those given are passed on)."""

    tools: list[JSONObject] | None
    response_schema: JSONReadObject | None
    temperature: float
    seed: int | None
    max_tokens: int | None


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


async def transcribe_async(
    asr: ASR, audio: Audio, **options: Unpack[TranscribeOptions]
) -> Transcript:
    """``asr.transcribe(audio, **options)`` without blocking the event loop."""
    if isinstance(asr, AsyncASR):
        return await asr.atranscribe(audio, **options)
    return await run_blocking(functools.partial(asr.transcribe, audio, **options))


async def chat_async(
    llm: LLM, messages: list[Message], **options: Unpack[ChatOptions]
) -> ChatResponse:
    """``llm.chat(messages, **options)`` without blocking the event loop."""
    if isinstance(llm, AsyncLLM):
        return await llm.achat(messages, **options)
    return await run_blocking(functools.partial(llm.chat, messages, **options))


async def synthesize_async(tts: TTS, text: str, *, voice: str | None = None) -> Audio:
    """``tts.synthesize(text, voice=voice)`` without blocking the event loop."""
    if isinstance(tts, AsyncTTS):
        return await tts.asynthesize(text, voice=voice)
    return await run_blocking(functools.partial(tts.synthesize, text, voice=voice))
