"""The cascade system: speech recognition -> language model -> speech synthesis. One class
serves both protocols: ``reply(history)`` for single-turn queries and ``open_call()`` for live
calls (a per-call session whose LLM uses the scenario's tools).

With no options it is the embedded tiny baseline (Whisper tiny.en -> SmolLM2-135M -> Piper),
which runs offline on a laptop CPU. It is there to exercise the pipeline, not to compete:
its identity and reports say so.

Where the two protocols used to differ, each keeps its behaviour: in single-turn replies the
``tts`` provider speaks with ``voice`` (the engine's voice name), the answer is capped at
``max_tokens`` (160) and ``system_prompt`` is the default below; in a live call the agent
speaks with ``voice`` as ``engine:voice`` or a speaker profile (default piper:joe), its prompt
is the scenario's role and policy (an explicit ``system_prompt`` is placed before it) and
``max_tokens`` applies only when set.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio
from voxeval.config import ProviderSpec, SystemSpec
from voxeval.errors import ConfigError, EndpointError
from voxeval.json_types import JSONObject
from voxeval.providers.base import ASR, LLM, TTS, VAD, ChatResponse, Message
from voxeval.providers.factory import ProviderSource, system_component
from voxeval.providers.http.openai_http import count_requests
from voxeval.providers.runtime.async_dispatch import (
    chat_async,
    synthesize_async,
    transcribe_async,
)
from voxeval.systems.base import CALL, REPLY, SYSTEMS, Reply, SystemBase, Turn
from voxeval.systems.call import AgentTurn
from voxeval.systems.llm_call import DEFAULT_CALL_VOICE, LLMToolAgent, renderer_from, warm_asr
from voxeval.systems.options import ComponentSpec, endpoint_fault, parse_options, provider_identity
from voxeval.systems.turn_handling import FrameVAD, TurnPolicy, frame_vad_from

DEFAULT_ASR = ProviderSpec(provider="whisper-tiny-en")
DEFAULT_LLM = ProviderSpec(provider="smollm2")
DEFAULT_TTS = ProviderSpec(provider="piper")
DEFAULT_VAD = ProviderSpec(provider="silero")
TINY_BASELINE_LABEL = "tiny baseline"

DEFAULT_SYSTEM_PROMPT = (
    "You are a voice assistant. Everything you write is read aloud to the user, so answer in "
    "plain spoken sentences: no lists, headings, markdown, code or emojis. Answer the question "
    "directly and keep it brief, a few sentences at most."
)

# Markdown and symbols a TTS engine would read out literally or stumble over.
_INLINE_MARKUP = re.compile(r"[*_`~]+")
_LINE_MARKUP = re.compile(r"^\s*(?:[#>|]+|[-+•]|\d+[.)])\s+|\|", re.MULTILINE)


class CascadeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asr: ComponentSpec | None = DEFAULT_ASR  # None: text-only calls (no speech input)
    llm: ComponentSpec = DEFAULT_LLM
    tts: ComponentSpec = DEFAULT_TTS
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_tokens: int = Field(default=160, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    voice: str | None = None
    language: str | None = "en"
    max_tool_rounds: int = Field(default=8, ge=0)  # live calls: tool rounds per caller turn
    # live calls: streaming VAD (None: the energy VAD) and turn handling (None: the run's)
    vad: ComponentSpec | None = DEFAULT_VAD
    turn: TurnPolicy | None = None

    def call_voice(self) -> str | None:
        """The agent's voice in calls; an explicit null means none (the engine's agent voice
        speaks the text)."""
        return self.voice if "voice" in self.model_fields_set else DEFAULT_CALL_VOICE

    def call_system_prompt(self) -> str | None:
        return self.system_prompt if "system_prompt" in self.model_fields_set else None

    def call_max_tokens(self) -> int | None:
        return self.max_tokens if "max_tokens" in self.model_fields_set else None


def spoken_text(text: str) -> str:
    """The LLM text as it should be spoken: markup removed, whitespace collapsed."""
    return " ".join(_LINE_MARKUP.sub(" ", _INLINE_MARKUP.sub("", text)).split())


@SYSTEMS.register("cascade")
class CascadeSystem(SystemBase):
    """ASR -> LLM -> TTS. ``reply`` transcribes every user turn that has no text yet, sends the
    whole conversation to the LLM and speaks its answer. The text channel is the LLM's text.
    ``open_call`` starts a live call's session (``CascadeAgent``)."""

    capabilities = frozenset({REPLY, CALL})

    def __init__(
        self,
        name: str,
        asr: ASR | None,
        llm: LLM,
        tts: TTS,
        options: CascadeOptions,
        vad: VAD | None = None,
    ) -> None:
        self.name = name
        self.asr = asr
        self.llm = llm
        self.tts = tts
        self.options = options
        self.vad = vad

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> CascadeSystem:
        opts = parse_options(spec, CascadeOptions)
        return cls(
            spec.name,
            system_component(ctx, "asr", opts.asr),
            system_component(ctx, "llm", opts.llm),
            system_component(ctx, "tts", opts.tts),
            opts,
            # the VAD listens to the caller's audio: no speech input, no VAD
            system_component(ctx, "vad", opts.vad) if opts.asr is not None else None,
        )

    @property
    def is_tiny_baseline(self) -> bool:
        o = self.options
        return (o.asr, o.llm, o.tts) == (DEFAULT_ASR, DEFAULT_LLM, DEFAULT_TTS)

    def identity(self) -> JSONObject:
        ident: dict[str, Any] = {
            "type": "cascade",
            "asr": None if self.asr is None else provider_identity(self.asr),
            "llm": provider_identity(self.llm),
            "tts": provider_identity(self.tts),
            "system_prompt": self.options.system_prompt,
            "max_tokens": self.options.max_tokens,
            "temperature": self.options.temperature,
            "voice": self.options.voice,
            "vad": None if self.vad is None else provider_identity(self.vad),
            "turn": None if self.options.turn is None else self.options.turn.model_dump(),
        }
        if self.is_tiny_baseline:
            ident["label"] = TINY_BASELINE_LABEL
        return ident

    def open_call(self) -> CascadeAgent:
        """A fresh session for one call; the ASR is warmed first so its model load is not
        counted as the agent's latency."""
        o = self.options
        return CascadeAgent(
            llm=self.llm,
            asr=warm_asr(self.asr),
            tts=renderer_from(o.call_voice()),
            temperature=o.temperature,
            max_tool_rounds=o.max_tool_rounds,
            system_prompt=o.call_system_prompt(),
            max_tokens=o.call_max_tokens(),
            language=o.language,
            vad=self.vad,
            turn_policy=o.turn,
        )

    def _messages(self, history: Sequence[Turn]) -> tuple[list[Message], float, str]:
        """Chat messages for ``history``; returns them with the ASR time and what the ASR heard
        in the last user turn."""
        messages: list[Message] = [{"role": "system", "content": self.options.system_prompt}]
        asr_s, heard = 0.0, ""
        for turn in history:
            text = turn.text
            if turn.role == "user" and text is None:
                if turn.audio is None:
                    raise ValueError("a user turn needs audio or text")
                if self.asr is None:
                    raise ConfigError(f"system {self.name!r}: audio input needs 'asr'")
                start = time.perf_counter()
                text = self.asr.transcribe(turn.audio, language=self.options.language).text
                asr_s += time.perf_counter() - start
                heard = text
            messages.append({"role": turn.role, "content": (text or "").strip()})
        return messages, asr_s, heard

    def reply(self, history: Sequence[Turn]) -> Reply:
        """Answer the last user turn. A component's endpoint that still fails after its
        retries is this system's fault (``SystemFault``); ``details["usage"]`` counts the
        HTTP requests, retries and timeouts the reply cost."""
        if not history or history[-1].role != "user":
            raise ValueError("cascade.reply needs a history that ends with a user turn")
        with count_requests() as http:
            try:
                reply = self._answer(history)
            except EndpointError as exc:
                raise endpoint_fault(self.name, exc) from exc
        reply.details["usage"].update(http.as_dict())
        return reply

    async def areply(self, history: Sequence[Turn]) -> Reply:
        """``reply`` from an asyncio task: remote components are awaited (no thread waits on
        their servers), embedded ones run in a worker thread."""
        if not history or history[-1].role != "user":
            raise ValueError("cascade.reply needs a history that ends with a user turn")
        with count_requests() as http:
            try:
                reply = await self._answer_async(history)
            except EndpointError as exc:
                raise endpoint_fault(self.name, exc) from exc
        reply.details["usage"].update(http.as_dict())
        return reply

    async def _answer_async(self, history: Sequence[Turn]) -> Reply:
        t0 = time.perf_counter()
        messages: list[Message] = [{"role": "system", "content": self.options.system_prompt}]
        asr_s, heard = 0.0, ""
        for turn in history:
            text = turn.text
            if turn.role == "user" and text is None:
                if turn.audio is None:
                    raise ValueError("a user turn needs audio or text")
                if self.asr is None:
                    raise ConfigError(f"system {self.name!r}: audio input needs 'asr'")
                start = time.perf_counter()
                transcript = await transcribe_async(
                    self.asr, turn.audio, language=self.options.language
                )
                text = str(transcript.text)
                asr_s += time.perf_counter() - start
                heard = text
            messages.append({"role": turn.role, "content": (text or "").strip()})
        start = time.perf_counter()
        response = await chat_async(
            self.llm,
            messages,
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
        )
        llm_s = time.perf_counter() - start
        text = spoken_text(response.text)
        start = time.perf_counter()
        audio = await synthesize_async(self.tts, text, voice=self.options.voice) if text else None
        return self._assemble(response, text, audio, heard, t0, asr_s, llm_s, start)

    def _answer(self, history: Sequence[Turn]) -> Reply:
        t0 = time.perf_counter()
        messages, asr_s, heard = self._messages(history)
        start = time.perf_counter()
        response = self.llm.chat(
            messages, temperature=self.options.temperature, max_tokens=self.options.max_tokens
        )
        llm_s = time.perf_counter() - start
        text = spoken_text(response.text)
        start = time.perf_counter()
        audio = self.tts.synthesize(text, voice=self.options.voice) if text else None
        return self._assemble(response, text, audio, heard, t0, asr_s, llm_s, start)

    def _assemble(
        self,
        response: ChatResponse,
        text: str,
        audio: Audio | None,
        heard: str,
        t0: float,
        asr_s: float,
        llm_s: float,
        tts_start: float,
    ) -> Reply:
        tts_s = time.perf_counter() - tts_start
        details: dict[str, Any] = {
            "heard": heard,
            "llm_text": response.text,
            "usage": {
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
                "cost_usd": response.usage.cost_usd,
            },
        }
        if self.is_tiny_baseline:
            details["label"] = TINY_BASELINE_LABEL
        timing = {
            "asr_s": asr_s,
            "llm_s": llm_s,
            "tts_s": tts_s,
            "total_s": time.perf_counter() - t0,
        }
        return Reply(audio=audio, text=text, timing=timing, details=details)


class CascadeAgent(LLMToolAgent):
    """One call's session: the caller is transcribed by ``asr``, the LLM answers with the
    scenario's tools, ``tts`` (a speech renderer) speaks the answer. In a call it listens
    through ``vad`` (a streaming Silero VAD) with ``turn_policy`` (the run's when None): it
    finds end of turn, stops its playback when the caller talks over it and keeps only the
    words the caller heard in its LLM history."""

    name = "cascade"
    hears_text = True

    def __init__(
        self,
        *,
        llm: LLM,
        asr: ASR | None = None,
        tts: Callable[[str], Audio] | None = None,
        temperature: float = 0.0,
        max_tool_rounds: int = 8,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
        language: str | None = "en",
        vad: VAD | None = None,
        turn_policy: TurnPolicy | None = None,
    ) -> None:
        super().__init__(llm, tts, temperature, max_tool_rounds, system_prompt, max_tokens)
        self.asr = asr
        self.language = language
        self.vad = vad
        self.turn_policy = turn_policy

    def turn_vad(self) -> FrameVAD | None:
        """A fresh streaming VAD for this call (None: the engine's default)."""
        return None if self.vad is None else frame_vad_from(self.vad)

    def _hear(self, user_audio: Audio | None, user_text: str | None) -> str:
        if user_audio is None:
            return user_text or ""
        if self.asr is None:
            raise ConfigError("agent cascade: audio input needs an ASR provider ('asr')")
        return str(self.asr.transcribe(user_audio, language=self.language).text)

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        self._check_started()
        heard = self._hear(user_audio, user_text)
        return self._answer(heard, user_audio, heard=heard)
