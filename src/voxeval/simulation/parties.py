"""What the two sides of a live call exchange, and the interfaces they implement (the
agent side, ``AgentTurn`` and ``CallAgent``, lives with the systems in ``voxeval.systems.call``).

The call engine (``voxeval.simulation.engine``) owns time: it carries each party's speech on
the line in frames, adds each party's measured ``compute_s`` (or a configured latency model)
to the clock and records what happened. A caller decides what to say; how it says it (pauses,
backchannels, barge-ins) comes from its ``behaviour`` (``voxeval.simulation.caller_behaviour``)
when it has one. In text-only mode the engine passes ``audio=None`` and parties work on text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.registry import Kind
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
    name: str

    def start(self, scenario: Scenario) -> CallerTurn:
        """The caller's opening utterance (usually the scenario's starting utterance)."""
        ...

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn: ...


__all__ = ["AgentTurn", "CallAgent", "Caller", "CallerTurn", "ToolCallRecord"]

# Simulated caller classes by name (``simulation.caller`` in the run config).
CALLERS: Kind[type[Caller]] = Kind("caller")
