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
from voxeval.providers.base import Message
from voxeval.registry import register
from voxeval.simulation.agents.prompts import agent_system_prompt
from voxeval.simulation.agents.tool_loop import chat_with_tools
from voxeval.simulation.parties import AgentTurn

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.runner.context import RunContext
    from voxeval.simulation.tools import ToolRuntime


def provider_from(ctx: RunContext | None, kind: str, spec: Any) -> Any:
    """A provider from a config value (name or mapping), shared through the run context."""
    if spec is None:
        return None
    if ctx is not None:
        return ctx.provider(kind, spec)
    from voxeval.providers.factory import create_provider

    return create_provider(kind, spec)


def renderer_from(voice: str | None) -> Any:
    """A warmed-up speech renderer for an agent's voice option (None: no voice)."""
    if not voice:
        return None
    from voxeval.simulation.voices import shared_renderer

    renderer = shared_renderer(voice)
    renderer.warm_up()
    return renderer


_warm_asr: set[int] = set()


def warm_asr(asr: Any) -> Any:
    """Run the ASR once on silence so its model load is not counted as agent latency."""
    if asr is not None and id(asr) not in _warm_asr:
        asr.transcribe(Audio.silence(0.5))
        _warm_asr.add(id(asr))
    return asr


@register("agent", "cascade")
class CascadeAgent:
    name = "cascade"

    def __init__(
        self,
        *,
        llm: Any,
        asr: Any = None,
        tts: Any = None,
        temperature: float = 0.0,
        max_tool_rounds: int = 8,
    ) -> None:
        self.llm, self.asr, self.tts = llm, asr, tts
        self.temperature = temperature
        self.max_tool_rounds = max_tool_rounds
        self.messages: list[Message] = []
        self._tools: ToolRuntime | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any], ctx: RunContext | None) -> CascadeAgent:
        opts = dict(options)
        if "llm" not in opts:
            raise ConfigError("agent cascade: needs 'llm' ({provider: openai, base_url, model})")
        return cls(
            llm=provider_from(ctx, "llm", opts.pop("llm")),
            asr=warm_asr(provider_from(ctx, "asr", opts.pop("asr", "whisper-tiny-en"))),
            tts=renderer_from(opts.pop("voice", "piper:joe")),
            **opts,
        )

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        self.messages = [
            {"role": "system", "content": agent_system_prompt(scenario, hears_text=True)}
        ]
        greeting = scenario.agent.greeting
        if not greeting:
            return None
        self.messages.append({"role": "assistant", "content": greeting})
        return AgentTurn(text=greeting)

    def _hear(self, user_audio: Audio | None, user_text: str | None) -> str:
        if user_audio is None:
            return user_text or ""
        if self.asr is None:
            raise ConfigError("agent cascade: audio input needs an ASR provider ('asr')")
        return str(self.asr.transcribe(user_audio).text)

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        if self._tools is None:
            raise ConfigError("agent cascade: respond() called before start()")
        heard = self._hear(user_audio, user_text)
        self.messages.append({"role": "user", "content": heard})
        response, records = chat_with_tools(
            self.llm,
            self.messages,
            self._tools,
            max_rounds=self.max_tool_rounds,
            temperature=self.temperature,
        )
        text = response.text.strip()
        audio = self.tts(text) if (user_audio is not None and self.tts and text) else None
        return AgentTurn(text=text or None, audio=audio, tool_calls=tuple(records), heard=heard)
