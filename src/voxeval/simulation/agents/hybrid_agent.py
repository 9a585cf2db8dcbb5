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
from voxeval.providers.base import Message
from voxeval.registry import register
from voxeval.simulation.agents.cascade_agent import provider_from, renderer_from
from voxeval.simulation.agents.prompts import agent_system_prompt
from voxeval.simulation.agents.tool_loop import chat_with_tools
from voxeval.simulation.parties import AgentTurn

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.runner.context import RunContext
    from voxeval.simulation.tools import ToolRuntime


@register("agent", "hybrid")
class HybridAgent:
    name = "hybrid"

    def __init__(
        self, *, audio_llm: Any, tts: Any = None, temperature: float = 0.0, max_tool_rounds: int = 8
    ) -> None:
        self.llm, self.tts = audio_llm, tts
        self.temperature = temperature
        self.max_tool_rounds = max_tool_rounds
        self.messages: list[Message] = []
        self._tools: ToolRuntime | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any], ctx: RunContext | None) -> HybridAgent:
        opts = dict(options)
        if "audio_llm" not in opts:
            raise ConfigError("agent hybrid: needs 'audio_llm' ({provider: openai, ...})")
        return cls(
            audio_llm=provider_from(ctx, "audio_llm", opts.pop("audio_llm")),
            tts=renderer_from(opts.pop("voice", "piper:joe")),
            **opts,
        )

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        self.messages = [
            {"role": "system", "content": agent_system_prompt(scenario, hears_text=False)}
        ]
        if not scenario.agent.greeting:
            return None
        self.messages.append({"role": "assistant", "content": scenario.agent.greeting})
        return AgentTurn(text=scenario.agent.greeting)

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        if self._tools is None:
            raise ConfigError("agent hybrid: respond() called before start()")
        content: Any = user_text or ""
        if user_audio is not None:
            content = [{"type": "text", "text": "(the caller speaks)"}, user_audio]
        self.messages.append({"role": "user", "content": content})
        response, records = chat_with_tools(
            self.llm,
            self.messages,
            self._tools,
            max_rounds=self.max_tool_rounds,
            temperature=self.temperature,
        )
        text = response.text.strip()
        audio = self.tts(text) if (user_audio is not None and self.tts and text) else None
        return AgentTurn(text=text or None, audio=audio, tool_calls=tuple(records))
