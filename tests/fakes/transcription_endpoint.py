"""The scoring ASR of a test: voxeval's own ``openai`` ASR provider talking over HTTP to a
``FakeOpenAIServer`` scripted with transcripts.

    with FakeOpenAIServer() as server:
        server.push(transcription("My member ID is KX492B7."))
        asr = remote_asr(server)                  # the real provider, short retries
        ...
        (upload,) = uploaded_audio(server)        # what the provider sent, decoded

A failing ASR is the same server answering errors (``FaultSchedule``), so the provider's own
retries and the metrics' pending path run as in production.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from voxeval.audio import Audio, audio_from_bytes
from voxeval.providers.base import ASR
from voxeval.providers.factory import create_provider

TRANSCRIPTIONS = "/audio/transcriptions"
# One quick retry: enough to exercise the retry path, short enough for unit tests.
QUICK_RETRIES: dict[str, Any] = {
    "timeout_s": 5.0,
    "max_retries": 1,
    "backoff_base_s": 0.001,
    "backoff_max_s": 0.002,
}
_FILE_PART = re.compile(rb'name="file"; filename="[^"]*"\r\n(?:[^\r\n]+\r\n)*\r\n')


def transcription(text: str, language: str = "en") -> FakeResponse:
    """A ``/audio/transcriptions`` reply carrying ``text``."""
    return FakeResponse(json_body={"text": text, "language": language})


def remote_asr(server: FakeOpenAIServer, **options: Any) -> ASR:
    """The ``openai`` ASR provider pointed at ``server`` (``options`` override the spec)."""
    spec = {"provider": "openai", "base_url": server.url, "model": "asr", **QUICK_RETRIES}
    asr: ASR = create_provider("asr", {**spec, **options})
    return asr


def upload_audio(body: bytes) -> Audio:
    """The audio file of one multipart transcription request body, decoded."""
    found = _FILE_PART.search(body)
    assert found is not None, "a transcription request without a file part"
    start = found.end()
    end = body.index(b"\r\n--", start)  # the multipart boundary after the file
    return audio_from_bytes(body[start:end], source="upload")


def uploaded_audio(server: FakeOpenAIServer) -> list[Audio]:
    """The audio of every transcription request the server received, in order."""
    return [upload_audio(request.body) for request in server.posts(TRANSCRIPTIONS)]
