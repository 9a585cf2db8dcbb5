"""The ``hybrid`` system: an audio-capable LLM hears the caller directly (no separate ASR),
answers in text with tool calls, and a voice speaks the answer. Holds live calls only (its
single-turn counterpart with audio out is ``openai-audio``).

    systems:
      - {name: my-hybrid, type: hybrid,
         audio_llm: {provider: openai, base_url: ..., model: ...}, voice: piper:joe}
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio
from voxeval.config import SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.base import AudioLLM
from voxeval.providers.factory import ProviderSource, system_component
from voxeval.systems.base import CALL, SYSTEMS, SystemBase
from voxeval.systems.call import AgentTurn
from voxeval.systems.llm_call import DEFAULT_CALL_VOICE, LLMToolAgent, MessageContent, renderer_from
from voxeval.systems.options import ComponentSpec, parse_options, provider_identity


class HybridOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audio_llm: ComponentSpec
    voice: str | None = DEFAULT_CALL_VOICE  # engine:voice or a speaker profile
    system_prompt: str | None = None  # placed before the scenario's role and policy
    temperature: float = Field(default=0.0, ge=0.0)
    max_tool_rounds: int = Field(default=8, ge=0)


@SYSTEMS.register("hybrid")
class HybridSystem(SystemBase):
    capabilities = frozenset({CALL})

    def __init__(self, name: str, audio_llm: AudioLLM, options: HybridOptions) -> None:
        self.name = name
        self.audio_llm = audio_llm
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> HybridSystem:
        opts = parse_options(spec, HybridOptions)
        return cls(spec.name, system_component(ctx, "audio_llm", opts.audio_llm), opts)

    def identity(self) -> JSONObject:
        o = self.options
        return {
            "type": "hybrid",
            "audio_llm": provider_identity(self.audio_llm),
            "voice": o.voice,
            "temperature": o.temperature,
            "max_tool_rounds": o.max_tool_rounds,
        }

    def open_call(self) -> HybridAgent:
        o = self.options
        return HybridAgent(
            audio_llm=self.audio_llm,
            tts=renderer_from(o.voice),
            temperature=o.temperature,
            max_tool_rounds=o.max_tool_rounds,
            system_prompt=o.system_prompt,
        )


class HybridAgent(LLMToolAgent):
    """One call's session: the conversation so far, sent to the audio LLM each turn."""

    name = "hybrid"
    hears_text = False

    def __init__(
        self,
        *,
        audio_llm: AudioLLM,
        tts: Callable[[str], Audio] | None = None,
        temperature: float = 0.0,
        max_tool_rounds: int = 8,
        system_prompt: str | None = None,
    ) -> None:
        super().__init__(audio_llm, tts, temperature, max_tool_rounds, system_prompt)

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        content: MessageContent = user_text or ""
        if user_audio is not None:
            content = [{"type": "text", "text": "(the caller speaks)"}, user_audio]
        return self._answer(content, user_audio)
