"""Plumbing shared by LLM-based agents (cascade, hybrid): the voice and a warm ASR from options,
and the turn cycle system prompt -> user message -> tool loop -> spoken answer. Their model
providers come from ``voxeval.providers.factory.system_component`` (never cached: an agent is
a system under test)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from voxeval.audio import Audio
from voxeval.errors import ConfigError
from voxeval.providers.base import Message
from voxeval.simulation.agents.prompts import agent_system_prompt
from voxeval.simulation.agents.tool_loop import chat_with_tools
from voxeval.simulation.parties import AgentTurn

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime


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


class LLMToolAgent:
    """Base of agents whose LLM answers in text (with tool calls) that ``tts`` speaks.
    ``hears_text``: the LLM gets the caller as a transcript, not as audio."""

    name: str
    hears_text: bool

    def __init__(self, llm: Any, tts: Any, temperature: float, max_tool_rounds: int) -> None:
        self.llm, self.tts = llm, tts
        self.temperature = temperature
        self.max_tool_rounds = max_tool_rounds
        self.messages: list[Message] = []
        self._tools: ToolRuntime | None = None

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        prompt = agent_system_prompt(scenario, hears_text=self.hears_text)
        self.messages = [{"role": "system", "content": prompt}]
        greeting = scenario.agent.greeting
        if not greeting:
            return None
        self.messages.append({"role": "assistant", "content": greeting})
        return AgentTurn(text=greeting)

    def _check_started(self) -> ToolRuntime:
        if self._tools is None:
            raise ConfigError(f"agent {self.name}: respond() called before start()")
        return self._tools

    def _answer(
        self, content: Any, user_audio: Audio | None, heard: str | None = None
    ) -> AgentTurn:
        """Add the user turn, run the tool loop, and speak the answer when the caller spoke."""
        tools = self._check_started()
        self.messages.append({"role": "user", "content": content})
        response, records = chat_with_tools(
            self.llm,
            self.messages,
            tools,
            max_rounds=self.max_tool_rounds,
            temperature=self.temperature,
        )
        text = response.text.strip()
        audio = self.tts(text) if (user_audio is not None and self.tts and text) else None
        return AgentTurn(text=text or None, audio=audio, tool_calls=tuple(records), heard=heard)
