"""What the two sides of a live call exchange, and the interfaces they implement (the
agent side, ``AgentTurn`` and ``CallAgent``, lives with the systems in ``voxeval.systems.call``).

The call engine (``voxeval.simulation.engine``) owns time: it carries each party's speech on
the line in frames, adds each party's measured ``compute_s`` (or a configured latency model)
to the clock and records what happened. A caller decides what to say; how it says it (pauses,
backchannels, barge-ins) comes from its ``behaviour`` (``voxeval.simulation.caller_behaviour``)
when it has one. In text-only mode the engine passes ``audio=None`` and parties work on text.

A caller class declares every member the engine, the run config and the plan check read
(``Caller``); ``CallerBase`` gives the defaults, so a plugin caller inherits it and overrides
what it has: ``needs_llm`` (the run config passes it ``llm``, ``seed`` and ``temperature``),
``speaks`` (the languages it can play; None: any), ``behaviour_kinds`` (the
``simulation.behaviour`` values it supports, first the default; None: it takes no behaviour),
``behaviour`` and ``behaviour_kind`` (how it behaves on the line), ``persona``, ``speech_rate``
(its voice's rate factor) and ``interrupt`` (what it says when it cuts in; by default its usual
answer).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.registry import Kind
from voxeval.simulation.caller_behaviour import CallerBehaviour
from voxeval.simulation.personas import Persona
from voxeval.systems.call import AgentTurn, CallAgent


@dataclass(frozen=True)
class CallerTurn:
    text: str
    audio: Audio | None = None
    end_call: bool = False
    compute_s: float = 0.0
    heard: str | None = None  # the caller's transcript of the agent's turn


@runtime_checkable
class Caller(Protocol):
    """A simulated caller (the members are described in the module docstring)."""

    name: str

    # Class-level in ``CallerBase`` (the run config reads them off the registered class);
    # read-only here, so that a wrapper forwarding a caller's attributes is a Caller too.
    @property
    def needs_llm(self) -> bool: ...

    @property
    def speaks(self) -> tuple[str, ...] | None: ...

    @property
    def behaviour_kinds(self) -> tuple[str, ...] | None: ...

    @property
    def behaviour(self) -> CallerBehaviour | None:
        """How it pauses, backchannels and barges in (None: the engine's plain default)."""
        ...

    @property
    def behaviour_kind(self) -> str | None:
        """The resolved ``simulation.behaviour`` of ``behaviour`` (None: not chosen by it)."""
        ...

    @property
    def persona(self) -> Persona | None: ...

    @property
    def speech_rate(self) -> float: ...

    def start(self, scenario: Scenario) -> CallerTurn:
        """The caller's opening utterance (usually the scenario's starting utterance)."""
        ...

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn: ...

    def interrupt(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        """What it says when it cuts into the agent, having heard ``agent_text`` so far."""
        ...


class CallerBase(ABC):
    """The defaults of every optional ``Caller`` member; built-in and plugin callers inherit
    it. A plain caller needs no LLM, speaks any language, has no behaviour of its own (the
    engine pauses only at its ``...`` markers and never backchannels or barges in for it),
    no persona (the engine draws its response gaps from the default persona), speaks at the
    voice's own rate and, cutting in, says its usual answer."""

    name: str  # set by each caller class
    needs_llm: ClassVar[bool] = False
    speaks: ClassVar[tuple[str, ...] | None] = None
    behaviour_kinds: ClassVar[tuple[str, ...] | None] = None
    behaviour: CallerBehaviour | None = None
    behaviour_kind: str | None = None
    persona: Persona | None = None
    speech_rate: float = 1.0

    @abstractmethod
    def start(self, scenario: Scenario) -> CallerTurn: ...

    @abstractmethod
    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn: ...

    def interrupt(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        return self.respond(agent_audio, agent_text)


__all__ = ["AgentTurn", "CallAgent", "Caller", "CallerBase", "CallerTurn", "ToolCallRecord"]

# Simulated caller classes by name (``simulation.caller`` in the run config); each inherits
# ``CallerBase``, whose class-level members the run config and the plan check read.
CALLERS: Kind[type[CallerBase]] = Kind("caller")
