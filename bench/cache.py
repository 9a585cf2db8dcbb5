"""Cost of a provider call answered by the cache vs computed, from one run.

1. Whisper tiny.en transcribing ~4 s of Piper speech (miss: the model runs; hit: disk read).
2. An LLM call to an OpenAI-compatible server on 127.0.0.1 that takes 50 ms to answer.

Prints one line per case and, last, ``cache_hit_speedup: N`` (miss time / hit time for the
Whisper case, or the LLM case when the embedded models are not installed).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.fakes

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text

from voxeval.errors import ProviderUnavailable
from voxeval.providers import ProviderCache, create_provider

SENTENCE = "The quick brown fox jumps over the lazy dog, then naps until noon."
HITS = 20


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def miss_and_hits(call: Callable[[], Any]) -> tuple[float, float]:
    """(first call, median of HITS repeated calls)."""
    miss = timed(call)
    hits = [timed(call) for _ in range(HITS)]
    return miss, statistics.median(hits)


def whisper_case(cache: ProviderCache) -> tuple[float, float] | None:
    try:
        speech = create_provider("tts", "piper").synthesize(SENTENCE)
        asr = create_provider("asr", "whisper-tiny-en", cache=cache)
    except ProviderUnavailable as exc:
        print(f"whisper tiny.en: skipped ({exc})")
        return None
    asr.transcribe(speech.slice(0.0, 1.0))  # load the model first: time transcription only
    miss, hit = miss_and_hits(lambda: asr.transcribe(speech))
    print(
        f"whisper tiny.en, {speech.duration:.1f} s audio: miss {miss * 1000:.1f} ms, "
        f"hit {hit * 1000:.2f} ms, ratio {miss / hit:.0f}x"
    )
    return miss, hit


def llm_case(cache: ProviderCache) -> tuple[float, float]:
    def slow_server(path: str, body: Any) -> FakeResponse:
        reply = chat_text("A short answer.")
        reply.delay_s = 0.05
        return reply

    with FakeOpenAIServer(responder=slow_server) as server:
        spec = {"provider": "openai", "base_url": server.url, "model": "bench"}
        llm = create_provider("llm", spec, cache=cache)
        messages = [{"role": "user", "content": "Answer briefly."}]
        miss, hit = miss_and_hits(lambda: llm.chat(messages))
    print(
        f"llm over HTTP (50 ms server): miss {miss * 1000:.1f} ms, hit {hit * 1000:.2f} ms, "
        f"ratio {miss / hit:.0f}x"
    )
    return miss, hit


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="voxeval-bench-cache-") as folder:
        cache = ProviderCache(folder)
        whisper = whisper_case(cache)
        llm = llm_case(cache)
    miss, hit = whisper or llm
    print(f"cache_hit_speedup: {miss / hit:.0f}")


if __name__ == "__main__":
    main()
