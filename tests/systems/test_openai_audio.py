from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeResponse
from tests.systems.helpers import chirp, wav_b64
from voxeval.config import SystemSpec
from voxeval.systems import OpenAIAudioSystem, Turn


def audio_completion(transcript: str, seconds: float) -> FakeResponse:
    message = {
        "role": "assistant",
        "content": None,
        "audio": {"id": "a1", "data": wav_b64(chirp(seconds)), "transcript": transcript},
    }
    return FakeResponse(json_body={
        "id": "x", "object": "chat.completion", "model": "omni",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
    })  # fmt: skip


def test_audio_in_audio_out(openai_server) -> None:
    openai_server.push(audio_completion("It is sunny.", 0.6))
    spec = SystemSpec(
        name="omni", type="openai-audio", provider="openai", base_url=openai_server.url,
        model="gpt-4o-audio-preview", system_prompt="Be brief.", voice="verse",
    )  # fmt: skip
    system = OpenAIAudioSystem.from_spec(spec)
    reply = system.reply([Turn(role="user", audio=chirp(), item_id="q1")])
    assert reply.text == "It is sunny."
    assert reply.audio is not None and reply.audio.duration == pytest.approx(0.6)
    assert reply.details["usage"]["completion_tokens"] == 12
    body = openai_server.requests[0].body
    assert body["modalities"] == ["text", "audio"]
    assert body["audio"]["voice"] == "verse"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    part = body["messages"][1]["content"][0]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    assert system.identity()["audio_llm"]["model"] == "gpt-4o-audio-preview"
