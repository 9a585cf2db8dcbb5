"""What the systems that dial a live audio agent share (``webrtc``, ``pipecat``): the options
that tell a reply in the agent's audio, and a system that holds live calls only and opens a
fresh agent per call from its options."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from voxeval.config import SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SystemBase
from voxeval.systems.live.live_audio_agent import LiveAudioAgent
from voxeval.systems.options import parse_options


class LiveAudioOptions(BaseModel):
    """How a reply is found in the agent's audio (a subclass may change the defaults)."""

    model_config = ConfigDict(extra="forbid")
    greeting_wait_s: float = Field(default=2.0, ge=0)  # how long the agent has to greet first
    speech_level_dbfs: float = Field(default=-45.0, lt=0)  # louder chunks are the agent speaking
    reply_gap_ms: float = Field(default=400.0, gt=0)  # quiet that ends a reply
    turn_timeout_s: float = Field(default=60.0, gt=0)  # longest reply being received
    # the caller plans its reactions to a reply (barge-in) for this long: its real length is
    # unknown while it arrives; caller speech this close to a reply's end: the agent yielded
    expected_reply_s: float = Field(default=3.0, gt=0)
    yield_window_s: float = Field(default=1.0, ge=0)


OptionsT = TypeVar("OptionsT", bound=LiveAudioOptions)


class LiveAudioSystem(SystemBase, ABC, Generic[OptionsT]):
    """Holds live calls only; each call gets its own ``agent_class`` built from the options."""

    capabilities = frozenset({CALL})
    options_model: ClassVar[type[LiveAudioOptions]]
    agent_class: ClassVar[type[LiveAudioAgent]]

    def __init__(self, name: str, options: OptionsT) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> Self:
        return cls(spec.name, parse_options(spec, cls.options_model))  # type: ignore[arg-type]

    @abstractmethod
    def identity(self) -> JSONObject:
        """What identifies this system in a run's provenance (its type and endpoint)."""

    def open_call(self) -> LiveAudioAgent:
        return self.agent_class(**self.options.model_dump())
