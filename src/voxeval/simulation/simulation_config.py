"""The ``simulation:`` section of a live-call run config.

simulation:
  caller: scripted            # or llm (then caller_llm: {provider: openai, ...})
  mode: audio                 # or text (no audio: word-count timing, same metrics)
  caller_voice: piper:joe     # engine:voice, or a profile like "female,adult,scottish"
  agent_voice: piper:joe      # renders agents that return text only
  caller_asr: {provider: whisper-tiny-en}
  persona: null               # default behavioural persona (conditions may override)
  eot_silence_ms: 700         # agent end-of-turn silence threshold
  latency_model: {agent: {kind: fixed, ms: 800}}
  max_duration_s: 600
  agent_timeout_s: 15
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voxeval.config import ProviderSpec, format_validation_error
from voxeval.errors import ConfigError
from voxeval.providers.factory import ProviderSource, harness_provider
from voxeval.providers.speech_renderer import SpeechRenderer, shared_renderer
from voxeval.simulation.latency import LatencyModel
from voxeval.simulation.parties import CALLERS, Caller
from voxeval.simulation.personas import get_persona
from voxeval.simulation.perturbations import Condition
from voxeval.simulation.turn_detection import FrameVAD, ProviderVAD


class SimulationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    caller: str = "scripted"
    caller_llm: ProviderSpec | None = None
    caller_asr: ProviderSpec = ProviderSpec(provider="whisper-tiny-en")
    caller_voice: str = "piper:joe"
    agent_voice: str = "piper:joe"
    persona: str | None = None
    mode: Literal["audio", "text"] = "audio"
    eot_silence_ms: float = Field(default=700.0, gt=0)
    caller_gap_ms: float = Field(default=600.0, ge=0)
    yield_ms: float = Field(default=300.0, ge=0)
    vad: ProviderSpec | None = None
    latency_model: LatencyModel | None = None
    max_duration_s: float = Field(default=600.0, gt=0)
    agent_timeout_s: float = Field(default=15.0, gt=0)

    def build_caller(
        self, ctx: ProviderSource | None, condition: Condition | None, seed: int = 0
    ) -> Caller:
        """The caller for one call; ``seed`` seeds an LLM caller's sampling (per call)."""
        persona = get_persona((condition.persona if condition else None) or self.persona)
        cls = CALLERS.lookup(self.caller)
        options: dict[str, Any] = {"persona": persona}
        if self.mode == "audio":
            options["asr"] = harness_provider(ctx, "asr", self.caller_asr)
        if getattr(cls, "needs_llm", False):
            if self.caller_llm is None:
                raise ConfigError(f"simulation.caller_llm: caller {self.caller!r} needs an LLM")
            options["llm"] = harness_provider(ctx, "llm", self.caller_llm)
            options["seed"] = seed
        return cls(**options)

    def caller_renderer(self, condition: Condition | None) -> SpeechRenderer:

        persona = get_persona((condition.persona if condition else None) or self.persona)
        voice = (condition.voice if condition else None) or persona.voice or self.caller_voice
        return shared_renderer(voice, persona.speech_rate)

    def agent_renderer(self) -> SpeechRenderer:

        return shared_renderer(self.agent_voice)

    def frame_vad(self, ctx: ProviderSource | None) -> FrameVAD | None:
        if self.vad is None:
            return None
        return ProviderVAD(harness_provider(ctx, "vad", self.vad))


def parse_simulation(data: dict[str, Any] | None, where: str = "simulation") -> SimulationConfig:
    try:
        return SimulationConfig.model_validate(data or {})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc
