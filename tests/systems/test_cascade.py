from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, FaultSchedule, chat_text
from tests.systems.helpers import chirp
from voxeval.audio import audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import SystemFault
from voxeval.systems import TINY_BASELINE_LABEL, CascadeSystem, Turn
from voxeval.systems.cascade import spoken_text


def test_spoken_text_removes_markup() -> None:
    assert spoken_text("**Yes.**\n- one\n- two\n1. three") == "Yes. one two three"


@pytest.mark.models
def test_remote_llm_cascade_uses_history(openai_server) -> None:
    """ASR and LLM over HTTP (fake server), espeak for speech; the text channel is the LLM's."""
    pytest.importorskip("shutil").which("espeak-ng") or pytest.skip("espeak-ng not installed")
    openai_server.push(chat_text("**Sure**, it is ten."))
    spec = SystemSpec(
        name="c", type="cascade",
        asr={"provider": "openai", "base_url": openai_server.url},
        llm={"provider": "openai", "base_url": openai_server.url, "model": "m"},
        tts={"provider": "espeak"},
    )  # fmt: skip
    system = CascadeSystem.from_spec(spec)
    history = [
        Turn(role="user", text="What is five plus five?"),
        Turn(role="assistant", text="Ten."),
        Turn(role="user", text="And again?"),
    ]
    reply = system.reply(history)
    assert reply.text == "Sure, it is ten."
    assert reply.details["llm_text"] == "**Sure**, it is ten."
    assert reply.audio is not None and reply.audio.duration > 0.5
    assert set(reply.timing) == {"asr_s", "llm_s", "tts_s", "total_s"}
    sent = openai_server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "label" not in system.identity()


@pytest.mark.models
def test_embedded_tiny_baseline_answers_a_spoken_question() -> None:
    from voxeval.providers.factory import create_provider

    system = CascadeSystem.from_spec(SystemSpec(name="tiny", type="cascade"))
    assert system.identity()["label"] == TINY_BASELINE_LABEL
    question = create_provider("tts", "piper").synthesize("What is the capital of France?")
    reply = system.reply([Turn(role="user", audio=question)])
    assert "capital" in reply.details["heard"].lower()
    assert reply.text and reply.audio is not None and reply.audio.duration > 0.3
    assert reply.timing["total_s"] >= reply.timing["llm_s"] > 0


def loopback_cascade(url: str, **retry: Any) -> CascadeSystem:
    fast = {"backoff_base_s": 0.001, **retry}
    spec = SystemSpec(
        name="c", type="cascade",
        asr={"provider": "openai", "base_url": url, **fast},
        llm={"provider": "openai", "base_url": url, "model": "m", **fast},
        tts={"provider": "openai", "base_url": url, **fast},
    )  # fmt: skip
    return CascadeSystem.from_spec(spec)


def answer(path: str, body: Any) -> FakeResponse:
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": "what time is it"})
    if path.endswith("/audio/speech"):
        return FakeResponse(raw=audio_to_wav_bytes(chirp(0.4)), content_type="audio/wav")
    return chat_text("It is noon.")


@pytest.mark.models
def test_usage_counts_the_requests_of_every_component() -> None:
    faults = FaultSchedule(["rate_limit", None, "server_error"])  # ASR once, then LLM once
    with FakeOpenAIServer(answer, faults=faults) as server:
        reply = loopback_cascade(server.url).reply([Turn(role="user", audio=chirp())])
        sent = len(server.requests)
    assert reply.text == "It is noon." and reply.audio is not None
    usage = reply.details["usage"]
    assert (usage["requests"], usage["retries"], sent) == (5, 2, 5)
    assert usage["prompt_tokens"] == 10


@pytest.mark.parametrize(
    ("path", "kind", "cause"),
    [
        ("/chat/completions", "server_error", "exception"),
        ("/chat/completions", "malformed_json", "malformed_output"),
        ("/audio/transcriptions", "hang", "timeout"),
        ("/audio/speech", "malformed_json", "malformed_output"),
    ],
)
@pytest.mark.models
def test_a_component_that_keeps_failing_is_a_system_fault(path: str, kind: str, cause: str) -> None:
    faults = FaultSchedule([kind], cycle=True, paths=[path], hang_s=0.6)
    with FakeOpenAIServer(answer, faults=faults) as server:
        system = loopback_cascade(server.url, max_retries=1, timeout_s=0.3)
        with pytest.raises(SystemFault) as caught:
            system.reply([Turn(role="user", audio=chirp())])
    assert caught.value.cause == cause
    assert "system 'c'" in str(caught.value) and path in str(caught.value)
