from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    FakeResponse,
    FaultSchedule,
    chat_omni_audio,
    chat_text,
)
from tests.systems.helpers import chirp, wav_b64
from voxeval.audio import audio_to_pcm16, audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import SystemFault
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


def omni(server_url: str, **options: Any) -> OpenAIAudioSystem:
    spec = SystemSpec(
        name="omni", type="openai-audio", provider="openai", base_url=server_url,
        model="m", backoff_base_s=0.001, **options,
    )  # fmt: skip
    return OpenAIAudioSystem.from_spec(spec)


def test_an_answer_without_audio_is_a_no_audio_fault(openai_server) -> None:
    openai_server.push(chat_text("I can only type."))
    with pytest.raises(SystemFault, match="answered without audio") as caught:
        omni(openai_server.url).reply([Turn(role="user", audio=chirp())])
    assert caught.value.cause == "no_audio"


@pytest.mark.parametrize(
    ("faults", "cause"),
    [
        (["server_error", "server_error"], "exception"),
        (["hang", "hang"], "timeout"),
        (["malformed_json", "empty_choices"], "malformed_output"),
    ],
)
def test_endpoint_failures_after_retries_are_system_faults(faults, cause) -> None:
    schedule = FaultSchedule(faults, hang_s=0.6)
    with FakeOpenAIServer(faults=schedule) as server:
        system = omni(server.url, max_retries=1, timeout_s=0.3)
        with pytest.raises(SystemFault) as caught:
            system.reply([Turn(role="user", audio=chirp())])
        assert len(server.requests) == 2  # one retry, then the failure is the system's
    assert caught.value.cause == cause


def test_transport_retries_are_counted_in_usage(openai_server) -> None:
    openai_server.push(FakeResponse(status=429, json_body={}), audio_completion("Yes.", 0.3))
    reply = omni(openai_server.url).reply([Turn(role="user", audio=chirp())])
    assert reply.details["usage"]["requests"] == 2 and reply.details["usage"]["retries"] == 1


def test_an_unreachable_endpoint_is_a_disconnect() -> None:
    system = omni("http://127.0.0.1:9/v1", max_retries=1)
    with pytest.raises(SystemFault) as caught:
        system.reply([Turn(role="user", audio=chirp())])
    assert caught.value.cause == "disconnect"


def test_vllm_omni_reply_text_first_choice_audio_second(openai_server) -> None:
    spoken = chirp(0.7, rate=24000)
    openai_server.push(chat_omni_audio("It opens at nine.", audio_to_wav_bytes(spoken)))
    reply = omni(openai_server.url).reply([Turn(role="user", audio=chirp())])
    assert reply.text == "It opens at nine."
    assert reply.audio is not None and reply.audio.rate == 24000
    assert reply.audio.duration == pytest.approx(0.7)


@pytest.mark.parametrize(("options", "rate"), [({}, 24000), ({"pcm_rate": 16000}, 16000)])
def test_raw_pcm16_replies_use_the_configured_rate(openai_server, options, rate) -> None:
    pcm = audio_to_pcm16(chirp(0.5), 16000)  # 8000 samples
    openai_server.push(chat_omni_audio("Yes.", pcm, audio_format="pcm16"))
    reply = omni(openai_server.url, **options).reply([Turn(role="user", audio=chirp())])
    assert reply.audio is not None and reply.audio.rate == rate
    assert reply.audio.num_samples == 8000


def test_an_undecodable_audio_reply_is_malformed_output(openai_server) -> None:
    openai_server.push(chat_omni_audio("Yes.", b"RIFF\x00\x00\x00\x00garbage!"))
    with pytest.raises(SystemFault, match=r"choices\[1\]\.message\.audio") as caught:
        omni(openai_server.url).reply([Turn(role="user", audio=chirp())])
    assert caught.value.cause == "malformed_output"
