"""The call session shared by LLM-based systems (cascade, hybrid): the scenario's system prompt,
then per caller turn the user message -> tool loop -> spoken answer. Also the agent's voice and
a warm ASR, so model loading is not counted as the agent's latency."""

from __future__ import annotations

from collections.abc import Callable

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import ConfigError
from voxeval.providers.base import ASR, LLM, Message, MessageValue
from voxeval.providers.voices.speech_renderer import SpeechRenderer, shared_renderer
from voxeval.systems.call import AgentTurn, CallAgentBase
from voxeval.systems.call_prompts import agent_system_prompt
from voxeval.systems.tool_loop import chat_with_tools

# The voice an LLM agent speaks with in a live call when its config names none.
DEFAULT_CALL_VOICE = "piper:joe"

# A user message's content: text, or parts (OpenAI content parts and ``Audio`` values).
MessageContent = str | list[MessageValue]


def renderer_from(voice: str | None) -> SpeechRenderer | None:
    """A warmed-up speech renderer for an agent's voice option (None: no voice)."""
    if not voice:
        return None

    renderer = shared_renderer(voice)
    renderer.warm_up()
    return renderer


_warm_asr: set[int] = set()


def warm_asr(asr: ASR | None) -> ASR | None:
    """Run the ASR once on silence so its model load is not counted as agent latency."""
    if asr is not None and id(asr) not in _warm_asr:
        asr.transcribe(Audio.silence(0.5))
        _warm_asr.add(id(asr))
    return asr


class LLMToolAgent(CallAgentBase):
    """Base of call sessions whose LLM answers in text (with tool calls) that ``tts`` speaks.
    ``hears_text``: the LLM gets the caller as a transcript, not as audio. ``system_prompt``
    (optional) is placed before the scenario's role and policy."""

    name: str
    hears_text: bool

    def __init__(
        self,
        llm: LLM,
        tts: Callable[[str], Audio] | None,
        temperature: float,
        max_tool_rounds: int,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.llm, self.tts = llm, tts
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_tool_rounds = max_tool_rounds
        self.system_prompt = system_prompt
        self.messages: list[Message] = []
        self._tools: ToolRuntime | None = None

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        prompt = agent_system_prompt(scenario, hears_text=self.hears_text)
        if self.system_prompt:
            prompt = f"{self.system_prompt.strip()}\n\n{prompt}"
        self.messages = [{"role": "system", "content": prompt}]
        greeting = scenario.agent.greeting
        if not greeting:
            return None
        self.messages.append({"role": "assistant", "content": greeting})
        return AgentTurn(text=greeting)

    def heard_by_caller(self, text: str) -> None:
        """The caller cut the last answer short: the history keeps only what it heard."""
        if self.messages and self.messages[-1].get("role") == "assistant":
            self.messages[-1] = {**self.messages[-1], "content": text}

    def _check_started(self) -> ToolRuntime:
        if self._tools is None:
            raise ConfigError(f"agent {self.name}: respond() called before start()")
        return self._tools

    def _answer(
        self, content: MessageContent, user_audio: Audio | None, heard: str | None = None
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
            max_tokens=self.max_tokens,
        )
        text = response.text.strip()
        audio = self.tts(text) if (user_audio is not None and self.tts and text) else None
        return AgentTurn(text=text or None, audio=audio, tool_calls=tuple(records), heard=heard)
