"""Speech synthesis through any OpenAI-compatible ``/audio/speech`` endpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

import httpx

from voxeval.audio import Audio, audio_from_bytes
from voxeval.errors import AudioError, ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.base import Voice
from voxeval.providers.http.openai_audio_endpoint import OpenAIAudioEndpoint
from voxeval.providers.http.openai_http import (
    EndpointOptions,
    MalformedReply,
)
from voxeval.providers.provider_kinds import TTS_PROVIDERS


@TTS_PROVIDERS.register("openai")
class OpenAISpeechTTS(OpenAIAudioEndpoint):
    """POST ``{model, voice, input, response_format: wav}`` to ``{base_url}/audio/speech``.

    The voices of a remote server are not described by it, so the catalogue lists only the
    configured ``voices`` (default: the one ``voice``) with unknown metadata.
    """

    kind = "tts"
    name = "openai"
    path = "audio/speech"

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "tts-1",
        voice: str = "alloy",
        api_key_env: str | None = None,
        speed: float = 1.0,
        timeout: float | None = None,  # older spelling of timeout_s
        **endpoint: Unpack[EndpointOptions],
    ) -> None:
        self._configure(base_url, model, api_key_env, endpoint, timeout)
        self.default_voice = voice
        self.speed = float(speed)

    def identity(self) -> JSONObject:
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
        name, body, decode = self._request(text, voice)
        audio = self._post(decode, json=body)
        return Audio(audio.samples, audio.rate, source=f"openai:{name}")

    async def asynthesize(self, text: str, *, voice: str | None = None) -> Audio:
        """``synthesize`` from an asyncio task (no thread waits on the server)."""
        name, body, decode = self._request(text, voice)
        audio = await self._apost(decode, json=body)
        return Audio(audio.samples, audio.rate, source=f"openai:{name}")

    def _request(
        self, text: str, voice: str | None
    ) -> tuple[str, JSONObject, Callable[[httpx.Response], Audio]]:
        if not text.strip():
            raise ConfigError("tts 'openai': text to synthesize is empty")
        name = (voice or self.default_voice).removeprefix("openai:")
        body: JSONObject = {
            "model": self.model,
            "voice": name,
            "input": text,
            "response_format": "wav",
            "speed": self.speed,
        }
        where = f"{self.endpoint} (voice {name})"

        def decode(response: httpx.Response) -> Audio:
            # A body that is not audio (an error page, a cut-off WAV) is retried.
            try:
                return audio_from_bytes(response.content, source=where)
            except AudioError as exc:
                raise MalformedReply(str(exc)) from exc

        return name, body, decode
