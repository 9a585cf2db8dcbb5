"""Speech recognition through any OpenAI-compatible ``/audio/transcriptions`` endpoint."""

from __future__ import annotations

import os
from typing import Any

import httpx

from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.providers.base import Availability, Transcript, Word
from voxeval.providers.openai_http import error_message
from voxeval.registry import register


def remote_availability(kind: str, base_url: str | None, api_key_env: str | None) -> Availability:
    """Configured enough to try? (No request is sent: doctor must stay offline and fast.)"""
    if not base_url:
        return Availability(False, f"{kind}: no base_url configured (an OpenAI-compatible server)")
    if api_key_env and not os.environ.get(api_key_env):
        return Availability(False, f"{kind}: environment variable {api_key_env} is not set")
    return Availability(True)


def auth_headers(api_key_env: str | None) -> dict[str, str]:
    """Bearer header from the named environment variable (the key is never stored)."""
    if not api_key_env:
        return {}
    key = os.environ.get(api_key_env)
    if not key:
        raise ProviderUnavailable(f"environment variable {api_key_env} (api_key_env) is not set")
    return {"Authorization": f"Bearer {key}"}


@register("asr", "openai")
class OpenAITranscriptionASR:
    """POST multipart audio to ``{base_url}/audio/transcriptions`` (e.g. OpenAI, vLLM,
    faster-whisper-server, LocalAI) and read a ``verbose_json`` or ``json`` reply."""

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "whisper-1",
        api_key_env: str | None = None,
        timeout: float = 60.0,
        language: str | None = None,
    ) -> None:
        avail = remote_availability("asr 'openai'", base_url, api_key_env)
        if not avail.available:
            raise ProviderUnavailable(avail.reason)
        if timeout <= 0:
            raise ConfigError(f"asr 'openai': timeout must be > 0, got {timeout}")
        self.base_url = str(base_url).rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.language = language
        self._client = httpx.Client(timeout=httpx.Timeout(self.timeout))

    @classmethod
    def availability(
        cls, base_url: str | None = None, api_key_env: str | None = None, **_: Any
    ) -> Availability:
        return remote_availability("asr 'openai'", base_url, api_key_env)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/audio/transcriptions"

    def identity(self) -> dict[str, Any]:
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
        lang = language or self.language
        data: dict[str, Any] = {
            "model": self.model,
            "response_format": "verbose_json",
            "temperature": str(temperature),
        }
        if lang:
            data["language"] = lang
        if word_timestamps:
            data["timestamp_granularities[]"] = "word"
        files = {"file": ("audio.wav", audio_to_wav_bytes(audio), "audio/wav")}
        try:
            response = self._client.post(
                self.endpoint, data=data, files=files, headers=auth_headers(self.api_key_env)
            )
        except httpx.TimeoutException as exc:
            raise EndpointError(f"{self.endpoint}: timed out after {self.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise EndpointError(f"{self.endpoint}: connection failed ({exc})") from exc
        if response.status_code >= 400:
            raise EndpointError(
                f"{self.endpoint}: HTTP {response.status_code}: {error_message(response)}"
            )
        return self._parse(response)

    def _parse(self, response: httpx.Response) -> Transcript:
        if "json" not in response.headers.get("content-type", "json"):
            return Transcript(text=response.text.strip(), provider=self.name)
        try:
            body = response.json()
        except ValueError as exc:
            raise EndpointError(
                f"{self.endpoint}: reply is not JSON: {response.text[:200]!r}"
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise EndpointError(f"{self.endpoint}: reply has no 'text' field: {str(body)[:200]}")
        words = tuple(
            Word(str(w.get("word", "")).strip(), float(w.get("start", 0)), float(w.get("end", 0)))
            for w in body.get("words") or ()
            if isinstance(w, dict)
        )
        details = {k: body[k] for k in ("duration", "segments") if k in body}
        return Transcript(
            text=body["text"].strip(),
            language=body.get("language"),
            words=words,
            provider=self.name,
            details=details,
        )
