"""What a system under test exchanges in a live call, and the per-call session interface.

The call engine owns time: it plays each party's speech, detects end of turn, adds each
party's measured ``compute_s`` (or a configured latency model) to the virtual clock. A call
session only decides what to say. In text-only mode the engine passes ``audio=None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from voxeval.audio import Audio
from voxeval.benchmarks.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord


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


@runtime_checkable
class CallAgent(Protocol):
    """One call's session with a system (sessions keep per-call state; open one per call)."""

    name: str

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        """Begin a call; return a greeting, or None to let the caller speak first."""
        ...

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        """Answer the caller's last turn (audio in audio mode, text in text-only mode)."""
        ...
