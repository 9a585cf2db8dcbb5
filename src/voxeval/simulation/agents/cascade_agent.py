"""A cascade voice agent: speech recognition -> chat LLM with tools -> speech synthesis.

Works with any OpenAI-compatible chat endpoint (``llm``), any ASR provider (``asr``, default
``whisper-tiny-en``) and any voice (``voice``: ``engine:voice`` or a speaker profile). The
system prompt holds the scenario's role and policy in our own wording.

    systems:
      - {name: my-cascade, type: agent, agent: cascade,
         llm: {provider: openai, base_url: http://localhost:8000/v1, model: my-model},
         asr: {provider: whisper-tiny-en}, voice: piper:joe}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from voxeval.audio import Audio
from voxeval.errors import ConfigError
from voxeval.providers.factory import system_component
from voxeval.registry import register
from voxeval.simulation.agents.llm_agent import LLMToolAgent, renderer_from
from voxeval.simulation.agents.llm_agent import warm_asr as warm_asr
from voxeval.simulation.parties import AgentTurn

if TYPE_CHECKING:
    from voxeval.runner.context import RunContext


@register("agent", "cascade")
class CascadeAgent(LLMToolAgent):
    name = "cascade"
    hears_text = True

    def __init__(
        self,
        *,
        llm: Any,
        asr: Any = None,
        tts: Any = None,
        temperature: float = 0.0,
        max_tool_rounds: int = 8,
    ) -> None:
        super().__init__(llm, tts, temperature, max_tool_rounds)
        self.asr = asr

    @classmethod
    def from_options(cls, options: dict[str, Any], ctx: RunContext | None) -> CascadeAgent:
        opts = dict(options)
        if "llm" not in opts:
            raise ConfigError("agent cascade: needs 'llm' ({provider: openai, base_url, model})")
        return cls(
            llm=system_component(ctx, "llm", opts.pop("llm")),
            asr=warm_asr(system_component(ctx, "asr", opts.pop("asr", "whisper-tiny-en"))),
            tts=renderer_from(opts.pop("voice", "piper:joe")),
            **opts,
        )

    def _hear(self, user_audio: Audio | None, user_text: str | None) -> str:
        if user_audio is None:
            return user_text or ""
        if self.asr is None:
            raise ConfigError("agent cascade: audio input needs an ASR provider ('asr')")
        return str(self.asr.transcribe(user_audio).text)

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        self._check_started()
        heard = self._hear(user_audio, user_text)
        return self._answer(heard, user_audio, heard=heard)
