"""What the two sides of a live call exchange, and the interfaces they implement.

The call engine (``voxeval.simulation.engine``) owns time: it plays each party's speech on the
audio bus, detects end of turn, adds each party's measured ``compute_s`` (or a configured
latency model) to the virtual clock and handles overlaps. Parties only decide what to say.
In text-only mode the engine passes ``audio=None`` and parties work on text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from voxeval.audio import Audio
from voxeval.benchmarks.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.registry import Kind


@dataclass(frozen=True)
class AgentTurn:
    """The agent's answer to one user turn.

    ``text`` is what the agent intends to say; ``audio`` is its own speech when it produces
    audio itself (speech-to-speech), otherwise the engine renders ``text`` with the agent's
    TTS. ``heard`` is the agent's own transcript of the user turn (for STT WER)."""

    text: str | None
    audio: Audio | None = None
    tool_calls: tuple[ToolCallRecord, ...] = ()
    end_call: bool = False
    compute_s: float = 0.0
    heard: str | None = None


@dataclass(frozen=True)
class CallerTurn:
    text: str
    audio: Audio | None = None
    end_call: bool = False
    compute_s: float = 0.0
    heard: str | None = None  # the caller's transcript of the agent's turn


@runtime_checkable
class CallAgent(Protocol):
    name: str

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        """Begin a call; return a greeting, or None to let the caller speak first."""
        ...

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        """Answer the caller's last turn (audio in audio mode, text in text-only mode)."""
        ...


@runtime_checkable
class Caller(Protocol):
    name: str

    def start(self, scenario: Scenario) -> CallerTurn:
        """The caller's opening utterance (usually the scenario's starting utterance)."""
        ...

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn: ...


# Simulated caller classes by name (``simulation.caller`` in the run config).
CALLERS: Kind[type[Caller]] = Kind("caller")
