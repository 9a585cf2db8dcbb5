"""Systems under test that answer turn by turn: ``reply(history) -> Reply``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, Self, get_args, runtime_checkable

from voxeval.audio import Audio
from voxeval.config import RunConfig, SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.registry import Kind
from voxeval.systems.call import CallAgent


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation; user turns carry audio, assistant turns what was heard/said."""

    role: Literal["user", "assistant"]
    audio: Audio | None = None
    text: str | None = None
    # Benchmark id of the item this turn belongs to (single-turn: the rendered item id).
    # Live systems ignore it; ``replay`` uses it to find the reply recorded for this item.
    item_id: str | None = None


@dataclass(frozen=True)
class Reply:
    """A system's answer. ``text`` is the system's own text channel when it has one (cascade
    LLM output, realtime transcript), not an ASR of ``audio``. ``timing`` holds seconds, e.g.
    {"first_audio_s": ..., "total_s": ..., "asr_s": ..., "llm_s": ..., "tts_s": ...}."""

    audio: Audio | None
    text: str | None = None
    timing: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class TurnSystem(Protocol):
    name: str

    def reply(self, history: Sequence[Turn]) -> Reply:
        """Answer the last user turn of ``history`` (earlier turns give context)."""
        ...

    def identity(self) -> JSONObject: ...


@runtime_checkable
class AsyncTurnSystem(TurnSystem, Protocol):
    """A turn system that can also be awaited: ``areply`` answers without holding a thread
    while it waits on the network (a coroutine function)."""

    async def areply(self, history: Sequence[Turn]) -> Reply: ...


# What a system can serve. A class declares ``capabilities`` (a frozenset of these), so a plan
# can be checked without building the system.
REPLY = "reply"  # reply(history) -> Reply: single-turn (and later multi-turn) protocols
CALL = "call"  # holds a live call: open_call() -> CallAgent, or a turn system in the adapter
CAPABILITY_TEXT = {
    REPLY: "replying to a turn (reply(history))",
    CALL: "holding a live call (open_call(), or reply(history) in the call adapter)",
}

# How a system hears the caller in a call, for the judged call metrics: a ``cascade`` works
# from its own transcript, ``speech_to_speech`` and ``hybrid`` systems hear the audio itself.
SystemPipeline = Literal["cascade", "hybrid", "speech_to_speech", "unknown"]
PIPELINES: tuple[str, ...] = get_args(SystemPipeline)


class SystemContext(ProviderSource, Protocol):
    """What a system is built with during a run (``voxeval.api.RunContext``, or the plan
    check's stand-in): the run's shared providers and its config, e.g. the scoring ``asr``."""

    @property
    def config(self) -> RunConfig: ...


class SystemBase:
    """The class members every system under test declares, with their defaults. Built-in
    systems inherit it; a plugin system should (or declare each member itself)."""

    # What it serves (``REPLY``, ``CALL``): each class declares its own.
    capabilities: ClassVar[frozenset[str]]
    # How it hears the caller (None: the built-in table of ``scoring.calls.call_pipeline``,
    # ``unknown`` for other types).
    pipeline: ClassVar[SystemPipeline | None] = None


# A system class seen before anything is built. A plugin class that does not inherit
# ``SystemBase`` is told apart by these runtime-checkable protocols, checked on the class.
@runtime_checkable
class DeclaresCapabilities(Protocol):
    capabilities: frozenset[str]


@runtime_checkable
class DeclaresPipeline(Protocol):
    pipeline: SystemPipeline | None


@runtime_checkable
class RepliesToTurns(Protocol):
    """A system with ``reply(history)`` (what ``TurnSystem`` asks of its methods)."""

    def reply(self, history: Sequence[Turn]) -> Reply: ...


@runtime_checkable
class OpensCalls(Protocol):
    """A system that holds live calls itself: ``open_call()`` gives a fresh session."""

    def open_call(self) -> CallAgent: ...


def capabilities_of(cls: type) -> frozenset[str]:
    """The capabilities a system class declares (``SystemBase.capabilities``); a plugin class
    that declares none offers what its methods show (``reply`` -> both, since the adapter can
    put it in a call; ``open_call`` -> call)."""
    if isinstance(cls, DeclaresCapabilities):  # the class object carries the declaration
        return frozenset(cls.capabilities)
    found: set[str] = set()
    if issubclass(cls, RepliesToTurns):
        found |= {REPLY, CALL}
    if issubclass(cls, OpensCalls):
        found.add(CALL)
    return frozenset(found)


def declared_pipeline(cls: type) -> SystemPipeline | None:
    """The pipeline a system class declares (``SystemBase.pipeline``), None when it declares
    none."""
    if isinstance(cls, DeclaresPipeline) and cls.pipeline in PIPELINES:
        return cls.pipeline
    return None


@runtime_checkable
class SystemUnderTest(Protocol):
    """What every system offers, whatever its capabilities: a name, an identity for the
    run's provenance, and a constructor from its config spec (``ctx`` builds components and
    holds the run's config; None when built from Python without a run)."""

    name: str

    def identity(self) -> JSONObject: ...

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: SystemContext | None = None) -> Self: ...


# System classes by type name (``systems: [{type: NAME}]`` in the run config).
SYSTEMS: Kind[type[SystemUnderTest]] = Kind("system")
