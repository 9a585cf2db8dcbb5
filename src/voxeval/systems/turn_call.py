"""The one adapter that puts a turn-based system (``reply(history) -> Reply``, e.g. ``http`` or
``openai-audio``) in a live call.

The session keeps the call's history as ``Turn``s: each caller turn is added (its audio in audio
mode, its text in text-only mode), the system answers the whole history, and its reply is added
back with its text channel. The system never sees the scenario's tools, so it makes no tool
calls; it does not greet (the caller speaks first). Whatever the system raises propagates
unchanged: the call engine scores it as the system's failure (a ``SystemFault`` keeps its
cause)."""

from __future__ import annotations

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.systems.base import Turn, TurnSystem
from voxeval.systems.call import AgentTurn, CallAgentBase


class TurnSystemCall(CallAgentBase):
    """A per-call session around ``system``; open one per call (it holds the history)."""

    def __init__(self, system: TurnSystem) -> None:
        self.system = system
        self.name = system.name
        self.history: list[Turn] = []

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self.history = []
        return None

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        text_in = user_text if user_audio is None else None
        self.history.append(Turn(role="user", audio=user_audio, text=text_in))
        reply = self.system.reply(list(self.history))
        self.history.append(Turn(role="assistant", audio=reply.audio, text=reply.text))
        heard = reply.details.get("heard")
        return AgentTurn(
            text=reply.text,
            # In text-only mode the call carries text: a reply's audio is not played.
            audio=reply.audio if user_audio is not None else None,
            heard=heard if isinstance(heard, str) else None,
        )

    def heard_by_caller(self, text: str) -> None:
        """The caller cut the last reply short: the history keeps only the words it heard."""
        if self.history and self.history[-1].role == "assistant":
            self.history[-1] = Turn(role="assistant", text=text)
