from __future__ import annotations

import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.systems.helpers import chirp, wav_b64
from voxeval.audio import audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import SystemFault
from voxeval.systems import HTTPSystem, HTTPSystemError, Turn


def system(url: str, **options) -> HTTPSystem:
    return HTTPSystem.from_spec(SystemSpec(name="web", type="http", url=url, **options))


def test_json_reply_with_text_and_multipart_request(monkeypatch) -> None:
    reply_audio = chirp(0.75)

    def responder(path, body):
        return FakeResponse(json_body={"audio": wav_b64(reply_audio), "text": "Hello there."})

    monkeypatch.setenv("WEB_TOKEN", "s3cret")
    history = [
        Turn(role="user", text="earlier question"),
        Turn(role="assistant", text="earlier answer"),
        Turn(role="user", audio=chirp(), item_id="q7"),
    ]
    with FakeOpenAIServer(responder) as server:
        web = system(server.url + "/reply", headers_env={"Authorization": "WEB_TOKEN"})
        reply = web.reply(history)
        request = server.requests[0]
    assert reply.text == "Hello there."
    assert reply.audio is not None and reply.audio.duration == pytest.approx(0.75)
    assert reply.timing["total_s"] > 0
    assert request.path == "/v1/reply"
    assert request.headers["Authorization"] == "s3cret"
    raw: bytes = request.body
    assert b'name="item_id"\r\n\r\nq7' in raw
    history_json = json.dumps([{"role": "user", "text": "earlier question"},
                               {"role": "assistant", "text": "earlier answer"}])  # fmt: skip
    assert history_json.encode() in raw
    assert b"RIFF" in raw  # the WAV upload


def test_wav_body_reply() -> None:
    wav = audio_to_wav_bytes(chirp(0.5))
    with FakeOpenAIServer(lambda p, b: FakeResponse(raw=wav, content_type="audio/wav")) as server:
        reply = system(server.url).reply([Turn(role="user", audio=chirp())])
    assert reply.text is None and reply.audio is not None
    assert reply.audio.duration == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("response", "message", "cause"),
    [
        (FakeResponse(status=503, json_body={"error": "busy"}), "HTTP 503", "exception"),
        (FakeResponse(status=400, json_body={"error": "bad"}), "HTTP 400: bad", "exception"),
        (FakeResponse(json_body={"text": "no audio"}), "has no 'audio'", "no_audio"),
        (FakeResponse(json_body={"audio": 3}), "'audio' as a base64", "malformed_output"),
        (FakeResponse(json_body={"audio": "%%%"}), "not valid base64", "malformed_output"),
        (FakeResponse(json_body=[1, 2]), "must be an object", "malformed_output"),
        (
            FakeResponse(json_body={"audio": "UklGRg==", "text": 7}),
            "'text' must be a string",
            "malformed_output",
        ),
        (
            FakeResponse(raw=b"hello", content_type="text/plain"),
            "neither audio nor JSON",
            "malformed_output",
        ),
        (
            FakeResponse(raw=b"RIFF?", content_type="audio/wav"),
            "audio cannot be used",
            "malformed_output",
        ),
    ],
)
def test_contract_violations_are_system_faults(response, message, cause) -> None:
    with (
        FakeOpenAIServer(lambda p, b: response) as server,
        pytest.raises(HTTPSystemError, match=message) as caught,
    ):
        system(server.url, max_retries=1, backoff_base_s=0.001).reply(
            [Turn(role="user", audio=chirp())]
        )
    assert isinstance(caught.value, SystemFault) and caught.value.cause == cause
    # Only transport failures are retried; a reply outside the contract is the system's answer.
    retried = response.status == 503
    assert len(server.requests) == (2 if retried else 1)
