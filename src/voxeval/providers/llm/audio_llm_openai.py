"""Audio-capable chat over the OpenAI protocol: audio input parts and optional spoken replies.

Messages may carry audio as ready-made ``input_audio`` parts or simply as ``Audio`` values
inside a content list; those are encoded as base64 WAV here (and hashed by their samples in
the call cache). With ``output_audio`` the request asks for ``modalities: [text, audio]`` and
the spoken reply is decoded into ``ChatResponse.audio``, its transcript into ``text``.
"""

from __future__ import annotations

import base64
from typing import Any, Unpack

from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.errors import AudioError, ConfigError, EndpointError
from voxeval.json_types import JSONObject, JSONReadObject, JSONValue
from voxeval.providers.base import ChatResponse, Message, MessageValue
from voxeval.providers.llm.llm_openai import OpenAIChat, OpenAIChatOptions
from voxeval.providers.llm.spoken_reply import (
    DEFAULT_PCM_RATE,
    decode_spoken_payload,
    find_reply_channels,
)
from voxeval.providers.provider_kinds import AUDIO_LLM_PROVIDERS


def input_audio_part(audio: Audio) -> dict[str, MessageValue]:
    """A content part carrying ``audio`` as base64 16-bit WAV."""
    data = base64.b64encode(audio_to_wav_bytes(audio)).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


def audio_message(audio: Audio, text: str | None = None, *, role: str = "user") -> Message:
    """A message with an optional text part followed by the audio part."""
    parts: list[Any] = [{"type": "text", "text": text}] if text else []
    return {"role": role, "content": [*parts, input_audio_part(audio)]}


def encode_audio_parts(messages: list[Message]) -> list[Message]:
    """Messages with every ``Audio`` value in a content list replaced by an input_audio part."""
    encoded = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, Audio) for p in content):
            parts: list[MessageValue] = [
                input_audio_part(p) if isinstance(p, Audio) else p for p in content
            ]
            message = {**message, "content": parts}
        encoded.append(message)
    return encoded


@AUDIO_LLM_PROVIDERS.register("openai")
class OpenAIAudioChat(OpenAIChat):
    """Chat with audio in (and optionally out) against an OpenAI-compatible endpoint.

    Extra options for the spoken reply: ``output_audio`` (default False), ``voice`` (default
    "alloy"), ``audio_format`` (the format asked for, default "wav") and ``pcm_rate`` (the
    sample rate of headerless PCM16 replies, default 24000). Where the reply's audio may be
    and how it is decoded: voxeval.providers.llm.spoken_reply. Everything else is as for the
    ``openai`` LLM provider.
    """

    def __init__(
        self,
        *,
        output_audio: bool = False,
        voice: str = "alloy",
        audio_format: str = "wav",
        pcm_rate: int = DEFAULT_PCM_RATE,
        **options: Unpack[OpenAIChatOptions],
    ) -> None:
        super().__init__(**options)
        if not isinstance(pcm_rate, int) or isinstance(pcm_rate, bool) or pcm_rate < 1000:
            raise ConfigError(f"audio_llm option pcm_rate must be a rate in Hz, got {pcm_rate!r}")
        if not isinstance(audio_format, str) or not audio_format:
            raise ConfigError(f"audio_llm option audio_format must be a name, got {audio_format!r}")
        self.output_audio = bool(output_audio)
        self.voice = voice
        self.audio_format = audio_format
        self.pcm_rate = pcm_rate

    def identity(self) -> JSONObject:
        return {
            **super().identity(),
            "output_audio": self.output_audio,
            "voice": self.voice,
            "audio_format": self.audio_format,
            "pcm_rate": self.pcm_rate,
        }

    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        output_audio: bool | None = None,
        voice: str | None = None,
    ) -> ChatResponse:
        body = self._base_body(tools, temperature, seed, max_tokens)
        speak = self.output_audio if output_audio is None else output_audio
        if speak:
            body["modalities"] = ["text", "audio"]
            body["audio"] = {"voice": voice or self.voice, "format": self.audio_format}
        return self._chat(encode_audio_parts(messages), body, response_schema)

    def _decode_choices(self, choices: list[JSONValue]) -> tuple[str, Audio | None]:
        found = find_reply_channels(choices)
        if found.spoken is None:
            return found.text, None
        where = f"{self.endpoint.shown()} model {self.model} audio reply"
        try:
            audio = decode_spoken_payload(
                found.spoken,
                pcm_rate=self.pcm_rate,
                source=where,
                requested_format=self.audio_format,
            )
        except AudioError as exc:
            raise EndpointError(str(exc), failure="malformed") from exc
        return found.text, audio
