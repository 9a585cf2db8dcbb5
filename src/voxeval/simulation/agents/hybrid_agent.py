"""A hybrid voice agent: an audio-capable LLM hears the caller directly (no separate ASR),
answers in text with tool calls, and a TTS voice speaks the answer.

    systems:
      - {name: my-hybrid, type: agent, agent: hybrid,
         audio_llm: {provider: openai, base_url: ..., model: ...}, voice: piper:joe}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from voxeval.audio import Audio
from voxeval.errors import ConfigError
from voxeval.providers.factory import system_component
from voxeval.registry import register
from voxeval.simulation.agents.llm_agent import LLMToolAgent, renderer_from
from voxeval.simulation.parties import AgentTurn

if TYPE_CHECKING:
    from voxeval.runner.context import RunContext


@register("agent", "hybrid")
class HybridAgent(LLMToolAgent):
    name = "hybrid"
    hears_text = False

    def __init__(
        self, *, audio_llm: Any, tts: Any = None, temperature: float = 0.0, max_tool_rounds: int = 8
    ) -> None:
        super().__init__(audio_llm, tts, temperature, max_tool_rounds)

    @classmethod
    def from_options(cls, options: dict[str, Any], ctx: RunContext | None) -> HybridAgent:
        opts = dict(options)
        if "audio_llm" not in opts:
            raise ConfigError("agent hybrid: needs 'audio_llm' ({provider: openai, ...})")
        return cls(
            audio_llm=system_component(ctx, "audio_llm", opts.pop("audio_llm")),
            tts=renderer_from(opts.pop("voice", "piper:joe")),
            **opts,
        )

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        content: Any = user_text or ""
        if user_audio is not None:
            content = [{"type": "text", "text": "(the caller speaks)"}, user_audio]
        return self._answer(content, user_audio)
