"""Speech recognition through any OpenAI-compatible ``/audio/transcriptions`` endpoint."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import httpx

from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.json_types import JSONObject
from voxeval.providers.base import Transcript, Word
from voxeval.providers.http.openai_audio_endpoint import OpenAIAudioEndpoint
from voxeval.providers.http.openai_http import (
    EndpointOptions,
    MalformedReply,
    decode_json_object,
)

# Kept importable from here, where they were first defined.
from voxeval.providers.http.openai_http import auth_headers as auth_headers
from voxeval.providers.http.openai_http import remote_availability as remote_availability
from voxeval.providers.provider_kinds import ASR_PROVIDERS


class TranscriptionRequest(TypedDict):
    """The multipart form of one ``/audio/transcriptions`` request, as httpx takes it."""

    data: dict[str, str]
    files: dict[str, tuple[str, bytes, str]]


@ASR_PROVIDERS.register("openai")
class OpenAITranscriptionASR(OpenAIAudioEndpoint):
    """POST multipart audio to ``{base_url}/audio/transcriptions`` (e.g. OpenAI, vLLM,
    faster-whisper-server, LocalAI) and read a ``verbose_json`` or ``json`` reply."""

    kind = "asr"
    name = "openai"
    path = "audio/transcriptions"

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "whisper-1",
        api_key_env: str | None = None,
        language: str | None = None,
        timeout: float | None = None,  # older spelling of timeout_s
        **endpoint: Unpack[EndpointOptions],
    ) -> None:
        self._configure(base_url, model, api_key_env, endpoint, timeout)
        self.language = language

    def identity(self) -> JSONObject:
        return {"provider": self.name, "base_url": self.base_url, "model": self.model}

    def transcribe(
        self,
        audio: Audio,
        *,
        language: str | None = "en",
        beam_size: int = 1,
        temperature: float = 0.0,
        word_timestamps: bool = False,
        seed: int | None = None,
    ) -> Transcript:
        # beam_size and seed have no field in this API; servers decode as they do.
        return self._post(
            self._parse, **self._request(audio, language, temperature, word_timestamps)
        )

    async def atranscribe(
        self,
        audio: Audio,
        *,
        language: str | None = "en",
        beam_size: int = 1,
        temperature: float = 0.0,
        word_timestamps: bool = False,
        seed: int | None = None,
    ) -> Transcript:
        """``transcribe`` from an asyncio task (no thread waits on the server)."""
        request = self._request(audio, language, temperature, word_timestamps)
        return await self._apost(self._parse, **request)

    def _request(
        self, audio: Audio, language: str | None, temperature: float, word_timestamps: bool
    ) -> TranscriptionRequest:
        lang = language or self.language
        data: dict[str, str] = {
            "model": self.model,
            "response_format": "verbose_json",
            "temperature": str(temperature),
        }
        if lang:
            data["language"] = lang
        if word_timestamps:
            data["timestamp_granularities[]"] = "word"
        files = {"file": ("audio.wav", audio_to_wav_bytes(audio), "audio/wav")}
        return {"data": data, "files": files}

    def _parse(self, response: httpx.Response) -> Transcript:
        """The transcript in a reply; a JSON reply without ``text`` is retried."""
        if "json" not in response.headers.get("content-type", "json"):
            return Transcript(text=response.text.strip(), provider=self.name)
        body = decode_json_object(response)
        if not isinstance(body.get("text"), str):
            raise MalformedReply(f"reply has no 'text' field: {str(body)[:200]}")
        try:
            words = tuple(
                Word(
                    str(w.get("word", "")).strip(), float(w.get("start", 0)), float(w.get("end", 0))
                )
                for w in body.get("words") or ()
                if isinstance(w, dict)
            )
        except (TypeError, ValueError) as exc:
            raise MalformedReply(f"unreadable word timestamps ({exc!r})") from exc
        details: dict[str, Any] = {k: body[k] for k in ("duration", "segments") if k in body}
        return Transcript(
            text=body["text"].strip(),
            language=body.get("language"),
            words=words,
            provider=self.name,
            details=details,
        )
