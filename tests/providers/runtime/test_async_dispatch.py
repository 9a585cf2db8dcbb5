"""Thread work awaited from asyncio: results, errors and the context follow the call; a
provider's declared coroutine twin is awaited instead of a thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import Future
from typing import Any

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.json_types import JSONObject
from voxeval.providers.base import (
    ChatResponse,
    LLMBase,
    Message,
    ProviderBase,
    Transcript,
    Voice,
)
from voxeval.providers.runtime.async_dispatch import (
    await_future,
    chat_async,
    run_blocking,
    synthesize_async,
    transcribe_async,
)
from voxeval.providers.usage.usage_meter import metered

TAG: contextvars.ContextVar[str] = contextvars.ContextVar("TAG", default="none")


def test_await_future_reads_a_settled_future_and_waits_for_one_that_is_not() -> None:
    async def main() -> tuple[int, int, str]:
        done: Future[int] = Future()
        done.set_result(1)
        first = await await_future(done)
        later: Future[int] = Future()
        threading.Timer(0.05, later.set_result, args=(2,)).start()
        second = await await_future(later)
        failed: Future[int] = Future()
        failed.set_exception(ValueError("bad write"))
        try:
            await await_future(failed)
        except ValueError as exc:
            return first, second, str(exc)
        raise AssertionError("the error was not raised")

    assert asyncio.run(main()) == (1, 2, "bad write")


def test_run_blocking_runs_in_another_thread_with_the_callers_context() -> None:
    async def main() -> tuple[str, bool]:
        TAG.set("unit-7")
        here = threading.get_ident()
        return await run_blocking(lambda: (TAG.get(), threading.get_ident() != here))

    assert asyncio.run(main()) == ("unit-7", True)


def test_run_blocking_raises_what_the_call_raised() -> None:
    def fail() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        asyncio.run(run_blocking(fail))


class BlockingASR(ProviderBase):
    """An embedded-style ASR: no coroutine twin, so its blocking method runs in a thread."""

    name = "blocking"

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def transcribe(self, audio: Audio, *, language: str | None = "en", **_: Any) -> Transcript:
        return Transcript(text=f"thread {threading.get_ident()}", language=language)


class TwinASR(BlockingASR):
    """A remote-style ASR: its ``atranscribe`` (``AsyncASR``) is awaited on the loop."""

    name = "twin"

    async def atranscribe(self, audio: Audio, *, language: str | None = "en") -> Transcript:
        return Transcript(text=f"loop {threading.get_ident()}", language=language)


class EchoLLM(LLMBase):
    name = "echo"

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def chat(self, messages: list[Message], **options: Any) -> ChatResponse:
        return ChatResponse(text=f"blocking {sorted(options)}")


class TwinLLM(EchoLLM):
    async def achat(self, messages: list[Message], **options: Any) -> ChatResponse:
        return ChatResponse(text=f"twin {sorted(options)}")


class ToneTTS(ProviderBase):
    name = "tone"

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def voices(self) -> list[Voice]:
        return []

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        return Audio(np.zeros(160, np.float32), 16000, source=f"blocking {voice}")


class TwinTTS(ToneTTS):
    async def asynthesize(self, text: str, *, voice: str | None = None) -> Audio:
        return Audio(np.zeros(160, np.float32), 16000, source=f"twin {voice}")


def test_the_coroutine_twin_is_awaited_when_declared_else_the_blocking_method_runs() -> None:
    clip = Audio(np.zeros(1600, np.float32), 16000)

    async def main() -> list[str]:
        loop_thread = f"{threading.get_ident()}"
        answers = [
            (await transcribe_async(TwinASR(), clip, language="es")).text,
            (await transcribe_async(BlockingASR(), clip, language="es")).text,
            # through the meter wrapper, as a run builds a system's components
            (await transcribe_async(metered("asr", TwinASR(), ("asr", "t", "t")), clip)).text,
        ]
        where = [a.replace(loop_thread, "LOOP") for a in answers]
        where.append((await chat_async(TwinLLM(), [], max_tokens=5)).text)
        where.append((await chat_async(EchoLLM(), [], temperature=0.5)).text)
        where.append(str((await synthesize_async(TwinTTS(), "hi", voice="v")).source))
        where.append(str((await synthesize_async(ToneTTS(), "hi", voice="v")).source))
        return where

    found = asyncio.run(main())
    assert found[0] == "loop LOOP" and found[2] == "loop LOOP"
    assert found[1].startswith("thread ") and found[1] != "thread LOOP"
    assert found[3:] == [
        "twin ['max_tokens']",  # only the options given are passed on
        "blocking ['temperature']",
        "twin v",
        "blocking v",
    ]
