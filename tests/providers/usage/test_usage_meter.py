"""The usage meter: every provider is metered by (kind, provider, model) inside a ledger,
transparently (class, signature, pickling), and a cache hit runs nothing and is not metered."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.providers.base import Transcript
from voxeval.providers.caching.cache import ProviderCache, cached
from voxeval.providers.usage.usage_ledger import UNATTRIBUTED, attributed, usage_ledger
from voxeval.providers.usage.usage_meter import metered, model_key


class EchoASR:
    name = "echo"
    model = "echo-1"

    def __init__(self) -> None:
        self.calls = 0

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name}

    def transcribe(self, audio: Audio, *, language: str | None = "en", seed: int | None = 0) -> Any:
        self.calls += 1
        return Transcript(text="hello", provider=self.name)


def second(seconds: float) -> Audio:
    return Audio(np.zeros(int(16000 * seconds), dtype=np.float32), 16000)


def test_calls_go_to_the_innermost_component_with_their_audio() -> None:
    inner = EchoASR()
    asr = metered("asr", inner, model_key("asr", "echo", inner))
    assert isinstance(asr, EchoASR)
    assert inspect.signature(asr.transcribe) == inspect.signature(inner.transcribe)
    asr.transcribe(second(1.0))  # no ledger open: forwarded, not kept
    with usage_ledger() as ledger:
        with attributed("scoring_asr"):
            asr.transcribe(second(1.5))
            asr.transcribe(second(0.5), language=None)
        asr.transcribe(second(2.0))
    use = ledger["scoring_asr"].models[("asr", "echo", "echo-1")]
    assert (use.calls, use.audio_in_s, use.requests) == (2, pytest.approx(2.0), 0)
    assert ledger[UNATTRIBUTED].models[("asr", "echo", "echo-1")].audio_in_s == pytest.approx(2.0)
    assert ledger["scoring_asr"].audio_in_s == pytest.approx(2.0)
    assert inner.calls == 4
    copy = pickle.loads(pickle.dumps(asr))
    assert copy.usage_key == ("asr", "echo", "echo-1") and isinstance(copy, EchoASR)


def test_a_cache_hit_is_not_metered(tmp_path: Path) -> None:
    inner = EchoASR()
    asr = cached("asr", metered("asr", inner, ("asr", "echo", "echo-1")), ProviderCache(tmp_path))
    with usage_ledger() as ledger, attributed("scoring_asr"):
        asr.transcribe(second(1.0), seed=1)
        asr.transcribe(second(1.0), seed=1)  # same inputs: answered from the cache
    use = ledger["scoring_asr"].models[("asr", "echo", "echo-1")]
    assert (use.calls, use.audio_in_s, inner.calls) == (1, pytest.approx(1.0), 1)
    assert ledger["scoring_asr"].calls == 1  # the attributed block: one logical call


class AsyncEchoASR(EchoASR):
    async def atranscribe(self, audio: Audio, *, language: str | None = "en") -> Any:
        self.calls += 1
        return Transcript(text="hello", provider=self.name)


def test_the_async_twin_is_metered_too() -> None:
    import asyncio
    import contextvars
    import threading

    inner = AsyncEchoASR()
    asr = metered("asr", inner, model_key("asr", "echo", inner))
    assert asyncio.iscoroutinefunction(asr.atranscribe)

    async def run() -> None:
        with attributed("agent"):
            await asr.atranscribe(second(0.75))

    with usage_ledger() as ledger:
        # on a thread of its own (in this context): the session may already run a loop here
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(asyncio.run, run()))
        worker.start()
        worker.join()
    use = ledger["agent"].models[("asr", "echo", "echo-1")]
    assert (use.calls, use.audio_in_s, inner.calls) == (1, pytest.approx(0.75), 1)


def test_model_and_component_usage_start_with_the_same_counts_in_the_same_order() -> None:
    from dataclasses import fields

    from voxeval.providers.usage.usage_ledger import ComponentUsage
    from voxeval.providers.usage.usage_meter import ModelUsage

    shared = ["calls", "requests", "retries", "timeouts", "prompt_tokens", "completion_tokens"]
    assert [f.name for f in fields(ModelUsage)][:6] == shared
    assert [f.name for f in fields(ComponentUsage)][:7] == [*shared, "cost_usd"]
    assert ModelUsage(1, 2).requests == 2 and ComponentUsage(3).calls == 3
