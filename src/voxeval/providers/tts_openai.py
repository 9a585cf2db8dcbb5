"""Speech synthesis through any OpenAI-compatible ``/audio/speech`` endpoint."""

from __future__ import annotations

from typing import Any

import httpx

from voxeval.audio import Audio, audio_from_bytes
from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.providers.asr_openai import auth_headers, remote_availability
from voxeval.providers.base import Availability, Voice
from voxeval.providers.openai_http import error_message
from voxeval.registry import register


@register("tts", "openai")
class OpenAISpeechTTS:
    """POST ``{model, voice, input, response_format: wav}`` to ``{base_url}/audio/speech``.

    The voices of a remote server are not described by it, so the catalogue lists only the
    configured ``voices`` (default: the one ``voice``) with unknown metadata.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "tts-1",
        voice: str = "alloy",
        api_key_env: str | None = None,
        timeout: float = 60.0,
        speed: float = 1.0,
    ) -> None:
        avail = remote_availability("tts 'openai'", base_url, api_key_env)
        if not avail.available:
            raise ProviderUnavailable(avail.reason)
        if timeout <= 0:
            raise ConfigError(f"tts 'openai': timeout must be > 0, got {timeout}")
        self.base_url = str(base_url).rstrip("/")
        self.model = model
        self.default_voice = voice
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.speed = float(speed)
        self._client = httpx.Client(timeout=httpx.Timeout(self.timeout))

    @classmethod
    def availability(
        cls, base_url: str | None = None, api_key_env: str | None = None, **_: Any
    ) -> Availability:
        return remote_availability("tts 'openai'", base_url, api_key_env)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/audio/speech"

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "default_voice": self.default_voice,
            "speed": self.speed,
        }

    def voices(self) -> list[Voice]:
        return [
            Voice(
                name=f"openai:{self.default_voice}",
                engine="openai",
                gender="unknown",
                age="unknown",
                accent="unknown",
                details={"base_url": self.base_url, "model": self.model},
            )
        ]

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        if not text.strip():
            raise ConfigError("tts 'openai': text to synthesize is empty")
        name = (voice or self.default_voice).removeprefix("openai:")
        body = {
            "model": self.model,
            "voice": name,
            "input": text,
            "response_format": "wav",
            "speed": self.speed,
        }
        try:
            response = self._client.post(
                self.endpoint, json=body, headers=auth_headers(self.api_key_env)
            )
        except httpx.TimeoutException as exc:
            raise EndpointError(f"{self.endpoint}: timed out after {self.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise EndpointError(f"{self.endpoint}: connection failed ({exc})") from exc
        if response.status_code >= 400:
            raise EndpointError(
                f"{self.endpoint}: HTTP {response.status_code}: {error_message(response)}"
            )
        audio = audio_from_bytes(response.content, source=f"{self.endpoint} (voice {name})")
        return Audio(audio.samples, audio.rate, source=f"openai:{name}")
