from __future__ import annotations

import pytest

from tests.fakes.openai_server import chat_text
from voxeval.config import SystemSpec
from voxeval.systems import TINY_BASELINE_LABEL, CascadeSystem, Turn
from voxeval.systems.cascade import spoken_text


def test_spoken_text_removes_markup() -> None:
    assert spoken_text("**Yes.**\n- one\n- two\n1. three") == "Yes. one two three"


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
