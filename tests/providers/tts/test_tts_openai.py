"""OpenAI-compatible /audio/speech client against the local fake server."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fakes.openai_server import FakeResponse, error
from voxeval.audio import audio_to_wav_bytes
from voxeval.errors import EndpointError
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
    openai_server.push(error(503, "overloaded"), error(503, "overloaded"))
    spec = {"provider": "openai", "base_url": openai_server.url, "max_retries": 1}
    tts = create_provider("tts", {**spec, "backoff_base_s": 0.001})
    with pytest.raises(EndpointError, match=r"/v1/audio/speech: gave up after 2 attempts") as err:
        tts.synthesize("hi")
    assert "HTTP 503: overloaded" in str(err.value) and err.value.status == 503
    openai_server.push(error(400, "no such voice"))
    with pytest.raises(EndpointError, match=r"/v1/audio/speech: HTTP 400: no such voice"):
        tts.synthesize("hi")


def test_a_body_that_is_not_audio_is_retried(openai_server, tone) -> None:  # type: ignore[no-untyped-def]
    wav = audio_to_wav_bytes(tone)
    openai_server.push(FakeResponse(raw=b"not audio", content_type="audio/wav"))
    openai_server.push(FakeResponse(raw=wav, content_type="audio/wav"))
    spec = {"provider": "openai", "base_url": openai_server.url, "backoff_base_s": 0.001}
    tts = create_provider("tts", spec)
    assert tts.synthesize("hi").duration == pytest.approx(tone.duration)
    assert tts.stats()["requests"] == 2 and tts.stats()["malformed_replies"] == 1
    openai_server.push(*[FakeResponse(raw=b"not audio", content_type="audio/wav")] * 2)
    retry_once = create_provider("tts", {**spec, "max_retries": 1})
    with pytest.raises(EndpointError, match="cannot decode") as err:
        retry_once.synthesize("hi")
    assert (err.value.failure, err.value.attempts) == ("malformed", 2)
