"""Usage counts every HTTP request, retry and timeout: against a loopback server that fails
20% of requests with every kind of fault, voxeval's counts equal what the server saw."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import (
    FAULT_KINDS,
    FakeOpenAIServer,
    FakeResponse,
    FaultSchedule,
    chat_text,
)
from voxeval.api.context import RunContext
from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.config import RunConfig
from voxeval.errors import SystemFault
from voxeval.providers.http.openai_http import count_requests
from voxeval.store import RunStore
from voxeval.systems import Turn

CALLS = 30
HANG_S = 2.0  # well past the client timeout, so a slow normal answer never counts as a hang
FAST = {"timeout_s": 1.0, "max_retries": 8, "backoff_base_s": 0.001, "backoff_max_s": 0.005}
TRANSPORT = ("rate_limit", "server_error", "hang")  # what a system's own endpoint retries


def speech(seconds: float = 0.3) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)


WAV = audio_to_wav_bytes(speech())


def responder(path: str, body: Any) -> FakeResponse:
    if path.endswith("/chat/completions"):
        return chat_text("fine")
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": "hello"})
    if path.endswith("/audio/speech"):
        return FakeResponse(raw=WAV, content_type="audio/wav")
    return FakeResponse(json_body={"audio": base64.b64encode(WAV).decode(), "text": "hi"})


@pytest.fixture
def faulty() -> Any:
    # Seed 9 sends every kind of fault, a hang included, to each of the four endpoints.
    faults = FaultSchedule.seeded(0.2, seed=9, hang_s=HANG_S)
    with FakeOpenAIServer(responder, faults=faults) as server:
        yield server


def make_ctx(tmp_path: Path, url: str) -> RunContext:
    system = {"name": "web", "type": "http", "url": url + "/reply", **FAST, "max_retries": 3}
    config = RunConfig(suite="x", systems=[system], cache_dir=str(tmp_path / "cache"))
    return RunContext(config=config, store=RunStore(tmp_path / "run"), seed=0)


def test_counts_equal_what_the_server_saw(tmp_path: Path, faulty: FakeOpenAIServer) -> None:
    ctx = make_ctx(tmp_path, faulty.url)
    remote = {"provider": "openai", "base_url": faulty.url, "model": "m", **FAST}
    llm = ctx.provider("llm", remote)  # cached: every call below has distinct inputs
    asr = ctx.provider("asr", remote, cache=False)
    tts = ctx.provider("tts", remote, cache=False)
    web = ctx.system("web")
    tallies: dict[str, int] = {"llm": 0, "asr": 0, "tts": 0}
    web_tally = failures = 0
    for n in range(CALLS):
        with count_requests() as tally:
            llm.chat([{"role": "user", "content": f"question {n}"}])
        tallies["llm"] += tally.requests
        with count_requests() as tally:
            asr.transcribe(speech(0.2 + n / 100))
        tallies["asr"] += tally.requests
        with count_requests() as tally:
            tts.synthesize(f"sentence {n}")
        tallies["tts"] += tally.requests
        with count_requests() as tally:
            try:
                reply = web.reply([Turn(role="user", audio=speech())])
            except SystemFault as fault:  # a bad body from the system under test is its failure
                assert fault.cause in ("malformed_output", "no_audio")
                failures += 1
            else:
                assert reply.details["usage"]["requests"] == tally.requests
        web_tally += tally.requests

    seen = {
        "llm": faulty.posts("/chat/completions"),
        "asr": faulty.posts("/audio/transcriptions"),
        "tts": faulty.posts("/audio/speech"),
    }
    stats = ctx.request_stats()
    for kind, label in (("llm", "llm:openai"), ("asr", "asr:openai"), ("tts", "tts:openai")):
        path = {"llm": "/chat/completions", "asr": "/transcriptions", "tts": "/speech"}[kind]
        faults = faulty.fault_counts(path)
        assert faults["hang"] > 0 and faults["rate_limit"] + faults["server_error"] > 0, kind
        assert stats[label]["requests"] == len(seen[kind]) == tallies[kind]
        assert stats[label]["retries"] == sum(faults.values())  # every fault was retried
        assert stats[label]["timeouts"] == faults["hang"]

    assert set(faulty.fault_counts()) == set(FAULT_KINDS)
    assert len(faulty.faults) / len(faulty.posts()) == pytest.approx(0.2, abs=0.06)
    web_faults = faulty.fault_counts("/reply")
    web_requests = len(faulty.posts("/reply"))
    assert stats["system:web"]["requests"] == web_requests
    assert stats["system:web"]["retries"] == sum(web_faults[k] for k in TRANSPORT)
    assert stats["system:web"]["timeouts"] == web_faults["hang"]
    assert failures == web_faults["malformed_json"] + web_faults["empty_choices"]
    assert web_tally == web_requests


def test_cache_hits_send_and_count_nothing(tmp_path: Path, faulty: FakeOpenAIServer) -> None:
    ctx = make_ctx(tmp_path, faulty.url)
    remote = {"provider": "openai", "base_url": faulty.url, "model": "m", **FAST}
    judge = ctx.provider("llm", remote)
    for _ in range(3):
        judge.chat([{"role": "user", "content": "same question"}])
    assert ctx.request_stats()["llm:openai"]["requests"] == len(faulty.posts())
    assert judge.cache_stats()["hits"] == 2
