"""The ``simulation:`` section of a live-call run config.

simulation:
  caller: scripted            # or llm (then caller_llm: {provider: openai, ...})
  caller_temperature: 0.0     # LLM caller sampling; > 0 lets a regenerated call differ
  mode: audio                 # or text (no audio: word-count timing, same metrics)
  language: en                # the callers' language (scenarios resolved for it; see below)
  caller_voice: piper:joe     # engine:voice, or a profile like "female,adult,scottish"
  agent_voice: piper:joe      # renders agents that return text only
  caller_asr: {provider: whisper-tiny-en}
  persona: null               # default behavioural persona (conditions may override)
  behaviour: auto             # rules | llm | none | auto (llm for the LLM caller, else rules)
  frame_ms: 20                # the line's frame (10-100 ms), both directions
  eot_silence_ms: 700         # adapted agents: silence that ends the caller's turn
  patience_ms: 0              # adapted agents: extra listening before taking the turn
  barge_in_ms: 500            # adapted agents: caller speech that stops their reply (null: never)
  min_interruption_words: 1   # ... and the words besides backchannels it must hold (0: any)
  interruption_asr: null      # counts those words in audio mode (default: as caller_asr)
  turn_vad: silero            # adapted agents' speech detector: silero (default) | energy | spec
  caller_gap_ms: null         # the caller's silence before answering (null: its persona's draw)
  caller_yield_ms: 1000       # the caller stops when talked over this long (null: never)
  latency_model: {agent: {kind: fixed, ms: 800}}
  tts_latency_model: {first_audio_ms: 250, per_char_ms: 0}  # text-only agents (see latency)
  max_duration_s: 600
  agent_timeout_s: 15
  validation:                 # simulation validation gates and regeneration
    attempts: 3               # calls per unit at most; 1 = no regeneration
    gates: [valid_end, user_behaviour, user_speech]

Languages: with ``language: es`` the voices, when not given, default to a voice of that language
(``DEFAULT_VOICES``) and the caller's ASR to the multilingual ``whisper-base``; a voice or ASR
that cannot handle the language is a ConfigError naming the field (``check_language``), raised
before the first call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxeval.audio import Audio
from voxeval.config import ProviderSpec, format_validation_error
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.json_types import JSONReadObject
from voxeval.providers.asr.spoken_language import base_language, language_name
from voxeval.providers.factory import ProviderSource, harness_provider
from voxeval.providers.voices.speech_renderer import SpeechRenderer, shared_renderer
from voxeval.providers.voices.voice_catalogue import voice_language
from voxeval.simulation.behaviour_choice import BehaviourKind, resolve_kind
from voxeval.simulation.engine import EngineSettings
from voxeval.simulation.latency import LatencyModel, RenderingLatency
from voxeval.simulation.parties import CALLERS, Caller
from voxeval.simulation.personas import get_persona
from voxeval.simulation.perturbations import Condition
from voxeval.simulation.turn_detection import FrameVAD, ProviderVAD
from voxeval.systems.turn_handling import EnergyFrameVAD, frame_vad_from
from voxeval.systems.turn_handling import FrameVAD as StreamingVAD

# The offline voice used for a language when the config names none.
DEFAULT_VOICES = {"en": "piper:joe", "es": "espeak:es+m3"}
# ASR models that only recognise English: wrong for a caller hearing another language.
ENGLISH_ONLY_ASR = frozenset({"whisper-tiny-en"})
MULTILINGUAL_ASR = "whisper-base"
# Adapted agents hear the caller through Silero by default: an energy detector takes street or
# cafe noise for speech and stops the agent (issue 38). ``energy`` names the level detector.
DEFAULT_TURN_VAD = "silero"
ENERGY_VAD = "energy"
STREAMING_VADS = frozenset({"silero"})
# A word counts towards an interruption when the ASR gives it at least this probability.
MIN_WORD_P = 0.5


# The simulation validation gates, in the order they run
# (``voxeval.scoring.calls.simulation_gates``).
GateName = Literal["valid_end", "user_behaviour", "user_speech"]
VALIDATION_GATES: tuple[GateName, ...] = ("valid_end", "user_behaviour", "user_speech")


class ValidationConfig(BaseModel):
    """``simulation.validation``: the gates every recorded call must pass before it is scored,
    and how many calls a unit may make to pass them (the first plus regenerations)."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(default=3, ge=1)
    gates: list[GateName] = Field(default_factory=lambda: list(VALIDATION_GATES))
    # Without an audio judge, may the offline ASR check fail a call? Off by default: with the
    # embedded Whisper tiny it mishears rare surnames and codes on most calls (measured:
    # docs/live-calls.md, "Simulation validation"), which would discard sound calls.
    asr_speech_gate: bool = False


class SimulationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    caller: str = "scripted"
    caller_llm: ProviderSpec | None = None
    # None: whisper-tiny-en for English, the multilingual whisper-base otherwise
    caller_asr_spec: ProviderSpec | None = Field(default=None, alias="caller_asr")
    language: str = Field(default="en", min_length=2)
    # None: DEFAULT_VOICES for the language
    caller_voice_spec: str | None = Field(default=None, alias="caller_voice")
    agent_voice_spec: str | None = Field(default=None, alias="agent_voice")
    persona: str | None = None
    # 0 keeps an LLM caller's words fixed; with > 0 (seeded per call and attempt) a call
    # regenerated after failing a validation gate can go differently
    caller_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # pauses, backchannels, barge-ins: rules | llm | none (behaviour_choice); auto: the
    # caller's default (llm for the LLM caller, rules for the scripted one)
    behaviour: BehaviourKind = "auto"
    mode: Literal["audio", "text"] = "audio"
    frame_ms: float = Field(default=20.0, ge=10, le=100)
    eot_silence_ms: float = Field(default=700.0, gt=0)
    patience_ms: float = Field(default=0.0, ge=0)
    # The interruption policy of adapted agents, as deployed agents configure it: LiveKit
    # Agents' min_interruption_duration (0.5 s by default) and a minimum-words rule in the
    # spirit of Pipecat's MinWordsInterruptionStrategy that skips backchannel words, so
    # "mm-hm" or a cough does not stop the agent (docs/live-calls.md, "Interruption policy").
    barge_in_ms: float | None = Field(default=500.0, ge=0)
    min_interruption_words: int = Field(default=1, ge=0)
    interruption_asr_spec: ProviderSpec | None = Field(default=None, alias="interruption_asr")
    # None: drawn per answer from the caller's persona (human-like, personas.response_gap)
    caller_gap_ms: float | None = Field(default=None, ge=0)
    caller_yield_ms: float | None = Field(default=1000.0, ge=0)
    vad: ProviderSpec | None = None
    # How adapted (turn-based) agents hear caller speech: None = ``vad`` when it streams,
    # else Silero (line noise does not count as speech); ``energy`` = the level detector.
    turn_vad: ProviderSpec | None = None
    latency_model: LatencyModel | None = None
    # declared speech model charged to text-only agents instead of our Piper time
    tts_latency_model: RenderingLatency = Field(default_factory=RenderingLatency)
    max_duration_s: float = Field(default=600.0, gt=0)
    agent_timeout_s: float = Field(default=15.0, gt=0)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)

    @model_validator(mode="before")
    @classmethod
    def _removed_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("turn_vad"), str):
            data = {**data, "turn_vad": {"provider": data["turn_vad"]}}
        if isinstance(data, dict) and "yield_ms" in data:
            raise ValueError(
                "yield_ms was removed: the agent's yield is no longer a constant of the "
                "simulator; an adapted agent stops after barge_in_ms of caller speech"
            )
        return data

    def engine_settings(self) -> EngineSettings:
        """The engine's timing and the default turn handling of adapted agents."""

        def seconds(ms: float | None) -> float | None:
            return None if ms is None else ms / 1000

        return EngineSettings(
            eot_silence_s=self.eot_silence_ms / 1000,
            patience_s=self.patience_ms / 1000,
            barge_in_s=seconds(self.barge_in_ms),
            min_interruption_words=self.min_interruption_words,
            caller_gap_s=seconds(self.caller_gap_ms),
            caller_yield_s=seconds(self.caller_yield_ms),
            frame_ms=self.frame_ms,
        )

    @property
    def caller_asr(self) -> ProviderSpec:
        if self.caller_asr_spec is not None:
            return self.caller_asr_spec
        english = base_language(self.language) == "en"
        return ProviderSpec(provider="whisper-tiny-en" if english else MULTILINGUAL_ASR)

    @property
    def interruption_asr(self) -> ProviderSpec:
        """The ASR adapted agents count interruption words with (audio mode)."""
        return self.interruption_asr_spec or self.caller_asr

    def word_counter(self, ctx: ProviderSource | None) -> Callable[[Audio], str] | None:
        """What the adapter transcribes would-be interruptions with; None when words do not
        matter (``min_interruption_words: 0``) or in text mode."""
        if self.min_interruption_words == 0 or self.mode != "audio":
            return None
        asr = harness_provider(ctx, "asr", self.interruption_asr)
        language = base_language(self.language)

        def transcribe(audio: Audio) -> str:
            heard = asr.transcribe(audio, language=language, word_timestamps=True)
            if not heard.words:  # an ASR without word timings: its text as it is
                return str(heard.text)
            # recognised words only: Whisper tiny makes up words for a short reverberant
            # "mm-hm" ("And then make sure.", each word below 0.5), real words score higher
            return " ".join(
                w.text for w in heard.words if w.probability is None or w.probability >= MIN_WORD_P
            )

        return transcribe

    @property
    def caller_voice(self) -> str:
        return self.caller_voice_spec or self._default_voice("caller_voice")

    @property
    def agent_voice(self) -> str:
        return self.agent_voice_spec or self._default_voice("agent_voice")

    def _default_voice(self, field: str) -> str:
        voice = DEFAULT_VOICES.get(base_language(self.language))
        if voice is None:
            raise ConfigError(
                f"simulation.{field}: no built-in voice speaks {self.language!r}; give an "
                "engine:voice that does (e.g. an espeak-ng or remote TTS voice)"
            )
        return voice

    def language_problems(self) -> dict[str, str]:
        """Field -> why it cannot serve a call in ``language`` (empty when all can)."""
        problems: dict[str, str] = {}
        wanted = base_language(self.language)
        if self.mode == "audio":
            named = {"caller_voice": self.caller_voice_spec, "agent_voice": self.agent_voice_spec}
            for field, voice in named.items():
                if voice is None:
                    try:  # the language's default voice
                        self._default_voice(field)
                    except ConfigError as exc:
                        problems[f"simulation.{field}"] = str(exc).partition(": ")[2]
                    continue
                try:
                    spoken = voice_language(voice)
                except ConfigError as exc:
                    problems[f"simulation.{field}"] = str(exc)
                    continue
                if spoken is not None and base_language(spoken) != wanted:
                    problems[f"simulation.{field}"] = (
                        f"voice {voice!r} speaks {language_name(spoken)}, but the run's language "
                        f"is {language_name(self.language)} ({self.language!r}); use a voice of "
                        f"that language (e.g. {DEFAULT_VOICES.get(wanted, 'an engine:voice')})"
                    )
            asr = self.caller_asr.provider
            if wanted != "en" and asr in ENGLISH_ONLY_ASR:
                problems["simulation.caller_asr"] = (
                    f"{asr!r} recognises English only, but the run's language is "
                    f"{self.language!r}; use the multilingual {MULTILINGUAL_ASR!r}"
                )
        return problems

    def check_language(self, where: str = "") -> None:
        """Raise ConfigError naming every field that cannot serve the run's language."""
        problems = self.language_problems()
        if problems:
            raise ConfigError(
                "\n".join(f"{where}{field}: {why}" for field, why in sorted(problems.items()))
            )

    def check_behaviour(self) -> None:
        """ConfigError when the caller cannot use ``behaviour`` (e.g. ``llm`` with the
        scripted caller), raised before the first call."""
        try:
            cls = CALLERS.lookup(self.caller)
        except UnknownComponent:  # reported where the caller is built
            return
        kinds = cls.behaviour_kinds
        if kinds is not None:
            resolve_kind(self.behaviour, kinds, self.caller)
        elif self.behaviour not in ("auto", "none"):
            raise ConfigError(
                f"simulation.behaviour: the {self.caller!r} caller has no behaviour to set"
            )

    def build_caller(
        self, ctx: ProviderSource | None, condition: Condition | None, seed: int = 0
    ) -> Caller:
        """The caller for one call; ``seed`` (per call) seeds its behaviour and an LLM
        caller's sampling."""
        persona = get_persona((condition.persona if condition else None) or self.persona)
        cls = CALLERS.lookup(self.caller)
        options: dict[str, Any] = {"persona": persona}
        self.check_behaviour()
        kinds = cls.behaviour_kinds
        if kinds is not None:  # a caller with a behaviour: which one, seeded per call
            options["behaviour_kind"] = resolve_kind(self.behaviour, kinds, self.caller)
            options["seed"] = seed
        if self.mode == "audio":
            options["asr"] = harness_provider(ctx, "asr", self.caller_asr)
        if cls.needs_llm:
            if self.caller_llm is None:
                raise ConfigError(f"simulation.caller_llm: caller {self.caller!r} needs an LLM")
            options["llm"] = harness_provider(ctx, "llm", self.caller_llm)
            options["seed"] = seed
            options["temperature"] = self.caller_temperature
        return cls(**options)

    def caller_renderer(self, condition: Condition | None) -> SpeechRenderer:

        persona = get_persona((condition.persona if condition else None) or self.persona)
        voice = (condition.voice if condition else None) or persona.voice or self.caller_voice
        return shared_renderer(voice, persona.speech_rate, base_language(self.language))

    def agent_renderer(self) -> SpeechRenderer:

        return shared_renderer(self.agent_voice, 1.0, base_language(self.language))

    def frame_vad(self, ctx: ProviderSource | None) -> FrameVAD | None:
        if self.vad is None:
            return None
        return ProviderVAD(harness_provider(ctx, "vad", self.vad))

    def turn_vad_spec(self) -> ProviderSpec:
        """The speech detector of adapted agents: ``turn_vad``, else ``vad`` when it can
        stream, else Silero."""
        if self.turn_vad is not None:
            return self.turn_vad
        if self.vad is not None and self.vad.provider in STREAMING_VADS:
            return self.vad
        return ProviderSpec(provider=DEFAULT_TURN_VAD)

    def agent_vad(self, ctx: ProviderSource | None) -> StreamingVAD:
        """The streaming VAD of adapted agents (a new one per call: it keeps state)."""
        spec = self.turn_vad_spec()
        if spec.provider == ENERGY_VAD:
            try:
                return EnergyFrameVAD(**spec.options())
            except TypeError as exc:
                raise ConfigError(f"simulation.turn_vad: {exc}") from exc
        provider = harness_provider(ctx, "vad", spec)
        if not provider.streams:
            raise ConfigError(
                f"simulation.turn_vad: vad {spec.provider!r} cannot stream (no open_stream()); "
                f"use {DEFAULT_TURN_VAD!r} or {ENERGY_VAD!r}"
            )
        return frame_vad_from(provider)


def parse_simulation(data: JSONReadObject | None, where: str = "simulation") -> SimulationConfig:
    try:
        sim = SimulationConfig.model_validate(data or {})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc
    sim.check_language()
    sim.check_behaviour()
    return sim
