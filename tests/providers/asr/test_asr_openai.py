"""OpenAI-compatible /audio/transcriptions client against the local fake server."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeResponse, error
from voxeval.config import ProviderSpec
from voxeval.errors import EndpointError, ProviderUnavailable
from voxeval.providers import availability, create_provider


def test_transcription_request_and_reply(openai_server, tone, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("VOXEVAL_TEST_KEY", "sk-test-123")
    openai_server.push(
        FakeResponse(
            json_body={
                "text": " Hello world. ",
                "language": "english",
                "duration": 1.0,
                "words": [
                    {"word": "Hello", "start": 0.0, "end": 0.4},
                    {"word": "world", "start": 0.5, "end": 0.9},
                ],
            }
        )
    )
    asr = create_provider(
        "asr",
        {
            "provider": "openai",
            "base_url": openai_server.url,
            "model": "whisper-x",
            "api_key_env": "VOXEVAL_TEST_KEY",
        },
    )
    result = asr.transcribe(tone, language="en", word_timestamps=True)
    assert result.text == "Hello world."
    assert result.language == "english"
    assert [w.text for w in result.words] == ["Hello", "world"]
    assert result.details["duration"] == 1.0
    request = openai_server.requests[0]
    assert request.path == "/v1/audio/transcriptions"
    assert request.headers["Authorization"] == "Bearer sk-test-123"
    body = request.body
    assert b'name="model"' in body and b"whisper-x" in body
    assert b'name="file"; filename="audio.wav"' in body and b"RIFF" in body
    assert b"timestamp_granularities[]" in body
    assert "sk-test-123" not in str(asr.identity())


def test_http_errors_name_endpoint_and_status(openai_server, tone) -> None:  # type: ignore[no-untyped-def]
    openai_server.push(error(400, "bad audio"))
    asr = create_provider("asr", {"provider": "openai", "base_url": openai_server.url})
    with pytest.raises(EndpointError, match=r"/v1/audio/transcriptions: HTTP 400: bad audio"):
        asr.transcribe(tone)


def test_availability_reasons(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("VOXEVAL_MISSING_KEY", raising=False)
    none = availability("asr", ProviderSpec(provider="openai"))
    assert not none.available and "base_url" in none.reason
    spec = ProviderSpec(
        provider="openai", base_url="http://127.0.0.1:9/v1", api_key_env="VOXEVAL_MISSING_KEY"
    )
    keyless = availability("asr", spec)
    assert not keyless.available and "VOXEVAL_MISSING_KEY" in keyless.reason
    with pytest.raises(ProviderUnavailable, match="VOXEVAL_MISSING_KEY"):
        create_provider("asr", spec)
