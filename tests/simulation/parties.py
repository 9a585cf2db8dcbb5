"""Small deterministic parties and a tone 'voice' for engine tests (no models)."""

from __future__ import annotations

import numpy as np

from voxeval.audio import Audio
from voxeval.simulation.caller_behaviour import ScheduledBehaviour
from voxeval.simulation.parties import AgentTurn, CallerBase, CallerTurn, ToolCallRecord
from voxeval.simulation.turn_detection import PAUSE_MARKER
from voxeval.systems.call import CallAgentBase

WORD_S = 0.4
PAUSE_S = 1.0


def tone_voice(text: str, rate: int = 16000) -> Audio:
    """Each word is a 0.4 s tone; each pause marker is 1 s of silence; 0.2 s of silence pads
    both ends (so trimming is exercised)."""
    pad = np.zeros(int(0.2 * rate), np.float32)
    parts = [pad]
    for n, piece in enumerate(p for p in PAUSE_MARKER.split(text) if p.strip()):
        if n:
            parts.append(np.zeros(int(PAUSE_S * rate), np.float32))
        words = len(piece.split())
        t = np.arange(int(words * WORD_S * rate)) / rate
        parts.append((0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32))
    parts.append(pad)
    return Audio(np.concatenate(parts), rate)


class ListAgent(CallAgentBase):
    """Says its lines in order (tool records attached where given), then hangs up."""

    name = "list-agent"

    def __init__(
        self,
        lines: list[str],
        greeting: str | None = "hello there",
        tools: dict[int, int] | None = None,
        silent_at: int | None = None,
    ) -> None:
        self.lines, self.greeting = list(lines), greeting
        self.tools = tools or {}
        self.silent_at = silent_at
        self.heard: list[str | None] = []

    def start(self, scenario, tools):  # type: ignore[no-untyped-def]
        return AgentTurn(self.greeting) if self.greeting else None

    def respond(self, user_audio, user_text):  # type: ignore[no-untyped-def]
        n = len(self.heard)
        self.heard.append(user_text)
        if self.silent_at is not None and n == self.silent_at:
            return AgentTurn(None)
        if n >= len(self.lines):
            return AgentTurn("goodbye now", end_call=True)
        records = tuple(
            ToolCallRecord("lookup", {"n": k}, {"ok": True}, kind="read")
            for k in range(self.tools.get(n, 0))
        )
        return AgentTurn(self.lines[n], tool_calls=records, heard=user_text)


class ListCaller(CallerBase):
    name = "list-caller"

    def __init__(self, opening: str, lines: list[str], barge_in_after_s: float | None = None):
        self.opening, self.lines = opening, list(lines)
        # a fixed barge-in point in every agent utterance long enough (the engine reads it)
        self.behaviour = ScheduledBehaviour(pause_s=PAUSE_S, barge_in_at_s=barge_in_after_s)
        self.heard: list[str | None] = []

    def start(self, scenario):  # type: ignore[no-untyped-def]
        return CallerTurn(self.opening)

    def respond(self, agent_audio, agent_text):  # type: ignore[no-untyped-def]
        self.heard.append(agent_text)
        if not self.lines:
            return CallerTurn("bye", end_call=True)
        return CallerTurn(self.lines.pop(0))


class NoTools:
    def __init__(self) -> None:
        self.db: dict = {}
        self.session: dict = {}

    def final_state(self) -> dict:
        return {"session": {}}
