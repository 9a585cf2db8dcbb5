"""Speech-to-speech models behind an OpenAI-style chat completions API with audio in and out
(GPT-4o-audio, or omni models served by vLLM). The request carries the user's audio as an
``input_audio`` part; the answer's audio is the reply and its transcript the text channel.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import EndpointError, SystemFault
from voxeval.json_types import JSONObject
from voxeval.providers.base import AudioLLM, Message
from voxeval.providers.factory import ProviderSource, system_component
from voxeval.providers.http.openai_http import count_requests
from voxeval.systems.base import CALL, REPLY, SYSTEMS, Reply, SystemBase, Turn
from voxeval.systems.options import ComponentSpec, endpoint_fault, parse_options, provider_identity

# Options that belong to the system; everything else describes the audio_llm provider.
_SYSTEM_FIELDS = {"audio_llm", "system_prompt", "max_tokens", "temperature"}


class OpenAIAudioOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audio_llm: ComponentSpec
    system_prompt: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)


def audio_part(wav: bytes) -> Message:
    """An OpenAI ``input_audio`` content part holding a WAV file."""
    return {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(wav).decode("ascii"), "format": "wav"},
    }


def parse_openai_audio_options(spec: SystemSpec) -> OpenAIAudioOptions:
    """Accept the provider either nested (``audio_llm: {provider: openai, ...}``) or flat
    (``provider: openai, base_url: ..., model: ...`` next to ``type``), like the judge."""
    raw = spec.options()
    if "audio_llm" not in raw:
        provider_fields = {k: v for k, v in raw.items() if k not in _SYSTEM_FIELDS}
        if "provider" not in provider_fields:
            provider_fields["provider"] = "openai"
        raw = {k: v for k, v in raw.items() if k in _SYSTEM_FIELDS}
        raw["audio_llm"] = provider_fields
    return parse_options(spec, OpenAIAudioOptions, raw)


@SYSTEMS.register("openai-audio")
class OpenAIAudioSystem(SystemBase):
    # In a live call it is wrapped in the turn adapter (voxeval.systems.turn_call).
    capabilities = frozenset({REPLY, CALL})

    def __init__(self, name: str, client: AudioLLM, options: OpenAIAudioOptions) -> None:
        self.name = name
        self.client = client
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> OpenAIAudioSystem:
        opts = parse_openai_audio_options(spec)
        return cls(spec.name, system_component(ctx, "audio_llm", opts.audio_llm), opts)

    def identity(self) -> JSONObject:
        return {
            "type": "openai-audio",
            "audio_llm": provider_identity(self.client),
            "system_prompt": self.options.system_prompt,
            "max_tokens": self.options.max_tokens,
            "temperature": self.options.temperature,
        }

    def _messages(self, history: Sequence[Turn]) -> list[Message]:
        messages: list[Message] = []
        if self.options.system_prompt:
            messages.append({"role": "system", "content": self.options.system_prompt})
        for turn in history:
            if turn.role == "user" and turn.audio is not None:
                messages.append(
                    {"role": "user", "content": [audio_part(audio_to_wav_bytes(turn.audio))]}
                )
            else:
                messages.append({"role": turn.role, "content": turn.text or ""})
        return messages

    def reply(self, history: Sequence[Turn]) -> Reply:
        """Send the conversation and return the spoken answer. An endpoint that still fails
        after its retries, or an answer without audio, is this system's fault
        (``SystemFault``); ``details["usage"]`` counts tokens and HTTP requests."""
        if not history or history[-1].role != "user":
            raise ValueError("openai-audio.reply needs a history that ends with a user turn")
        start = time.perf_counter()
        with count_requests() as http:
            try:
                response = self.client.chat(
                    self._messages(history),
                    temperature=self.options.temperature,
                    max_tokens=self.options.max_tokens,
                    output_audio=True,
                )
            except EndpointError as exc:
                raise endpoint_fault(self.name, exc) from exc
        total = time.perf_counter() - start
        if response.audio is None:
            raise SystemFault(
                f"system {self.name!r}: the endpoint answered without audio (no message.audio "
                f"and no audio content part in any choice; text: {response.text[:200]!r})",
                cause="no_audio",
            )
        details: dict[str, Any] = {
            "model": response.model,
            "usage": {
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
                "cost_usd": response.usage.cost_usd,
                **http.as_dict(),
            },
        }
        return Reply(
            audio=response.audio,
            text=response.text or None,
            timing={"total_s": total},
            details=details,
        )
