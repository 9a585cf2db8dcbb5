"""Audio-capable chat over the OpenAI protocol: audio input parts and optional spoken replies.

Messages may carry audio as ready-made ``input_audio`` parts or simply as ``Audio`` values
inside a content list; those are encoded as base64 WAV here (and hashed by their samples in
the call cache). With ``output_audio`` the request asks for ``modalities: [text, audio]`` and
the spoken reply is decoded into ``ChatResponse.audio``, its transcript into ``text``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from voxeval.audio import Audio, audio_from_bytes, audio_to_wav_bytes
from voxeval.errors import AudioError, EndpointError
from voxeval.providers.base import ChatResponse, Message
from voxeval.providers.llm_openai import OpenAIChat
from voxeval.registry import register


def input_audio_part(audio: Audio) -> dict[str, Any]:
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
            parts = [input_audio_part(p) if isinstance(p, Audio) else p for p in content]
            message = {**message, "content": parts}
        encoded.append(message)
    return encoded


@register("audio_llm", "openai")
class OpenAIAudioChat(OpenAIChat):
    """Chat with audio in (and optionally out) against an OpenAI-compatible endpoint.

    Extra options: ``output_audio`` (default False) and ``voice`` (default "alloy") for the
    spoken reply. Everything else is as for the ``openai`` LLM provider.
    """

    def __init__(self, *, output_audio: bool = False, voice: str = "alloy", **options: Any) -> None:
        super().__init__(**options)
        self.output_audio = bool(output_audio)
        self.voice = voice

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "output_audio": self.output_audio, "voice": self.voice}

    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: dict[str, Any] | None = None,
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
            body["audio"] = {"voice": voice or self.voice, "format": "wav"}
        return self._chat(encode_audio_parts(messages), body, response_schema)

    def _decode_message(self, message: dict[str, Any]) -> tuple[str, Audio | None]:
        text = str(message.get("content") or "")
        spoken = message.get("audio")
        if not isinstance(spoken, dict) or not spoken.get("data"):
            return text, None
        where = f"{self.endpoint.shown()} model {self.model} audio reply"
        try:
            raw = base64.b64decode(spoken["data"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EndpointError(
                f"{where}: audio data is not base64 ({exc})", failure="malformed"
            ) from exc
        try:
            audio = audio_from_bytes(raw, source=where)
        except AudioError as exc:
            raise EndpointError(str(exc), failure="malformed") from exc
        return text or str(spoken.get("transcript") or ""), audio
