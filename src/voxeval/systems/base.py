"""Systems under test that answer turn by turn: ``reply(history) -> Reply``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self, runtime_checkable

from voxeval.audio import Audio
from voxeval.config import SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.registry import Kind


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


def capabilities_of(cls: type) -> frozenset[str]:
    """The capabilities a system class declares; a plugin class that declares none offers
    what its methods show (``reply`` -> both, since the adapter can put it in a call;
    ``open_call`` -> call)."""
    declared = getattr(cls, "capabilities", None)
    if declared is not None:
        return frozenset(declared)
    found: set[str] = set()
    if callable(getattr(cls, "reply", None)):
        found |= {REPLY, CALL}
    if callable(getattr(cls, "open_call", None)):
        found.add(CALL)
    return frozenset(found)


@runtime_checkable
class SystemUnderTest(Protocol):
    """What every system offers, whatever its capabilities: a name, an identity for the
    run's provenance, and a constructor from its config spec (``ctx`` builds components)."""

    name: str

    def identity(self) -> JSONObject: ...

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> Self: ...


# System classes by type name (``systems: [{type: NAME}]`` in the run config).
SYSTEMS: Kind[type[SystemUnderTest]] = Kind("system")
