"""How long each party takes to start speaking after it decides to answer.

By default the agent's delay is its measured compute time (``time.perf_counter`` around its
``respond`` plus speech synthesis) and the caller answers after a fixed human-like gap: the
simulator's own speed is not what is being evaluated. A configured model replaces measured
times with fixed or normally distributed delays (in ms), which makes timing reproducible.

    latency_model:
      agent: {kind: normal, mean_ms: 900, sd_ms: 150}
      caller: {kind: fixed, ms: 0}
      tool: {kind: fixed, ms: 400}    # added per tool call

A text-only agent (one that returns text for voxeval to speak) is not charged voxeval's own
speech synthesis time: its latency is its own response time plus a *declared* speech model,
``tts_latency_model`` (``RenderingLatency``), reported apart as "rendering by voxeval".
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class ComponentLatency(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["measured", "fixed", "normal"] = "measured"
    ms: float = Field(default=0.0, ge=0)
    mean_ms: float = Field(default=0.0, ge=0)
    sd_ms: float = Field(default=0.0, ge=0)

    def seconds(self, measured_s: float, rng: np.random.Generator) -> float:
        if self.kind == "measured":
            return measured_s
        if self.kind == "fixed":
            return self.ms / 1000
        return max(0.0, float(rng.normal(self.mean_ms, self.sd_ms))) / 1000


class RenderingLatency(BaseModel):
    """The declared time a streaming TTS would take to its first audio, for text voxeval
    renders on a text-only agent's behalf: ``first_audio_ms + per_char_ms * characters``.
    The defaults describe a streaming cloud TTS (about 250 ms to first audio, independent of
    the text's length once streaming starts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first_audio_ms: float = Field(default=250.0, ge=0)
    per_char_ms: float = Field(default=0.0, ge=0)

    def seconds(self, text: str) -> float:
        return (self.first_audio_ms + self.per_char_ms * len(text.strip())) / 1000


class LatencyModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: ComponentLatency = ComponentLatency(kind="measured")
    caller: ComponentLatency = ComponentLatency(kind="fixed", ms=0.0)
    tool: ComponentLatency | None = None

    @property
    def agent_measured(self) -> bool:
        return self.agent.kind == "measured"

    def agent_delay(self, measured_s: float, n_tools: int, rng: np.random.Generator) -> float:
        delay = self.agent.seconds(measured_s, rng)
        if self.tool is not None:
            delay += sum(self.tool.seconds(0.0, rng) for _ in range(n_tools))
        return delay

    def caller_delay(self, measured_s: float, rng: np.random.Generator) -> float:
        return self.caller.seconds(measured_s, rng)
