"""OpenAI-compatible /audio/speech client against the local fake server."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fakes.openai_server import FakeResponse, error
from voxeval.audio import audio_to_wav_bytes
from voxeval.errors import AudioError, EndpointError
from voxeval.providers import create_provider


def test_speech_request_and_wav_reply(openai_server, tone) -> None:  # type: ignore[no-untyped-def]
    openai_server.push(FakeResponse(raw=audio_to_wav_bytes(tone), content_type="audio/wav"))
    tts = create_provider(
        "tts",
        {"provider": "openai", "base_url": openai_server.url, "model": "tts-x", "voice": "nova"},
    )
    audio = tts.synthesize("Hello there", voice="openai:shimmer")
    assert audio.rate == 16000
    assert np.allclose(audio.samples, tone.samples, atol=1e-4)
    request = openai_server.requests[0]
    assert request.path == "/v1/audio/speech"
    assert request.body == {
        "model": "tts-x",
        "voice": "shimmer",
        "input": "Hello there",
        "response_format": "wav",
        "speed": 1.0,
    }
    assert tts.voices()[0].name == "openai:nova"


def test_speech_errors_name_endpoint(openai_server) -> None:  # type: ignore[no-untyped-def]
    openai_server.push(error(503, "overloaded"))
    tts = create_provider("tts", {"provider": "openai", "base_url": openai_server.url})
    with pytest.raises(EndpointError, match=r"/v1/audio/speech: HTTP 503: overloaded"):
        tts.synthesize("hi")
    openai_server.push(FakeResponse(raw=b"not audio", content_type="audio/wav"))
    with pytest.raises(AudioError, match="cannot decode"):
        tts.synthesize("hi")
