"""Audio-capable chat: audio input parts, spoken replies, and caching of both."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, chat_audio, chat_text
from voxeval.audio import Audio, audio_from_bytes, audio_to_wav_bytes
from voxeval.errors import ConfigError
from voxeval.providers import ProviderCache, audio_message, create_provider
from voxeval.providers.llm.audio_llm_openai import OpenAIAudioChat


def tone(seconds: float, rate: int = 16000, hz: float = 330.0) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((0.4 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def test_audio_values_in_messages_become_input_audio_parts(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.push(chat_text("The speaker sounds calm."), chat_text("Same."))
    llm = OpenAIAudioChat(base_url=openai_server.url, model="gpt-4o-audio-preview")
    clip = tone(0.75)
    reply = llm.chat([{"role": "user", "content": [{"type": "text", "text": "Tone?"}, clip]}])
    assert reply.text == "The speaker sounds calm." and reply.audio is None
    body = openai_server.requests[0].body
    assert "modalities" not in body
    text_part, audio_part = body["messages"][0]["content"]
    assert text_part == {"type": "text", "text": "Tone?"}
    assert audio_part["type"] == "input_audio" and audio_part["input_audio"]["format"] == "wav"
    sent = audio_from_bytes(base64.b64decode(audio_part["input_audio"]["data"]))
    assert sent.rate == 16000 and sent.num_samples == clip.num_samples
    # The helper builds the same message.
    llm.chat([audio_message(clip, "Tone?")])
    assert openai_server.requests[1].body["messages"] == body["messages"]


def test_spoken_reply_is_decoded(openai_server: FakeOpenAIServer) -> None:
    spoken = tone(0.5, 24000, 220.0)
    openai_server.push(chat_audio("Hello from the model.", audio_to_wav_bytes(spoken)))
    llm = create_provider(
        "audio_llm",
        {"provider": "openai", "base_url": openai_server.url, "model": "m", "output_audio": True},
    )
    reply = llm.chat([audio_message(tone(0.3))], voice="verse")
    body = openai_server.requests[0].body
    assert body["modalities"] == ["text", "audio"]
    assert body["audio"] == {"voice": "verse", "format": "wav"}
    assert reply.text == "Hello from the model."
    assert reply.audio is not None and reply.audio.rate == 24000
    assert abs(reply.audio.duration - 0.5) < 1e-9
    assert np.max(np.abs(reply.audio.samples - spoken.samples)) < 1e-4  # 16-bit transport
    assert llm.identity()["output_audio"] is True and llm.identity()["voice"] == "alloy"


def test_audio_inputs_and_outputs_are_cached(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    spoken = tone(0.4, 24000)
    openai_server.push(
        chat_audio("First.", audio_to_wav_bytes(spoken)), chat_text("for other audio")
    )
    llm = create_provider(
        "audio_llm",
        {"provider": "openai", "base_url": openai_server.url, "model": "m"},
        cache=ProviderCache(tmp_path),
    )
    clip = tone(0.5)
    first = llm.chat([audio_message(clip)], output_audio=True)
    again = llm.chat([audio_message(Audio(clip.samples.copy(), clip.rate))], output_audio=True)
    assert again.cached and again.text == "First." and again.audio == first.audio
    assert len(openai_server.requests) == 1
    other = llm.chat([audio_message(tone(0.5, hz=440.0))], output_audio=True)
    assert other.text == "for other audio" and len(openai_server.requests) == 2
    assert len(list((tmp_path / "calls" / "audio_llm").rglob("*.wav"))) == 1


def test_audio_format_is_requested_and_a_bad_pcm_rate_is_a_config_error(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.push(chat_text("no audio"))
    llm = OpenAIAudioChat(base_url=openai_server.url, model="m", audio_format="pcm16")
    llm.chat([audio_message(tone(0.2))], output_audio=True)
    assert openai_server.requests[0].body["audio"] == {"voice": "alloy", "format": "pcm16"}
    assert llm.identity()["pcm_rate"] == 24000
    with pytest.raises(ConfigError, match="pcm_rate"):
        OpenAIAudioChat(base_url=openai_server.url, model="m", pcm_rate=0)
