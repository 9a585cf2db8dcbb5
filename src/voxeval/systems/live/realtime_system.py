"""The ``openai-realtime`` system: its options, and one websocket session per call.

``turn_detection: none`` (the default) gives a ``RealtimeAgent`` behind voxeval's turn
handling, so every system is judged with the same end-of-turn rule; ``server_vad`` gives a
``ServerVadRealtimeAgent`` that streams the whole line and lets the endpoint's detector take
the turns (``voxeval.systems.live.realtime_vad``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from voxeval.config import SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SYSTEMS, SystemBase
from voxeval.systems.live.realtime_vad import ServerVadRealtimeAgent
from voxeval.systems.live.realtime_ws import RealtimeAgent
from voxeval.systems.options import parse_options

VAD_OPTIONS = ("threshold", "prefix_padding_ms", "silence_duration_ms", "sync_every_ms")


class RealtimeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str = "gpt-realtime"
    url: str = Field(default="wss://api.openai.com/v1/realtime", pattern=r"^wss?://")
    api_key_env: str | None = "OPENAI_API_KEY"
    voice: str = "marin"
    beta_header: bool = True
    max_tool_rounds: int = Field(default=8, ge=0)
    turn_timeout_s: float = Field(default=60.0, gt=0)
    # "none": voxeval's turn handling decides turn ends and commits (the same rule for every
    # system); "server_vad": the endpoint's own detector listens to the whole line.
    turn_detection: Literal["none", "server_vad"] = "none"
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    prefix_padding_ms: int = Field(default=300, ge=0)
    silence_duration_ms: int = Field(default=500, gt=0)
    # server_vad: line audio sent before waiting for the server's events about it (20: every
    # frame, exact; each wait is one round trip to the endpoint)
    sync_every_ms: int = Field(default=20, ge=10)


@SYSTEMS.register("openai-realtime")
class RealtimeSystem(SystemBase):
    """Holds live calls only; each call opens its own websocket session (``RealtimeAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: RealtimeOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> RealtimeSystem:
        return cls(spec.name, parse_options(spec, RealtimeOptions))

    def identity(self) -> JSONObject:
        o = self.options
        identity: dict[str, Any] = {
            "type": "openai-realtime",
            "model": o.model,
            "url": o.url,
            "voice": o.voice,
        }
        if o.turn_detection == "server_vad":
            identity["turn_detection"] = o.model_dump(
                include={"turn_detection", "threshold", "prefix_padding_ms", "silence_duration_ms"}
            )
        return identity

    def open_call(self) -> RealtimeAgent:
        options = self.options.model_dump()
        if options.pop("turn_detection") == "server_vad":
            return ServerVadRealtimeAgent(**options)
        for key in VAD_OPTIONS:
            options.pop(key)
        return RealtimeAgent(**options)
