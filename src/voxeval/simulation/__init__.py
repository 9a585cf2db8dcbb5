"""Live simulated calls."""

from voxeval.simulation.parties import AgentTurn, CallAgent, Caller, CallerTurn, ToolCallRecord
from voxeval.simulation.timeline import EndEvent, SpeechSegment, Timeline, ToolEvent

__all__ = [
    "AgentTurn",
    "CallAgent",
    "Caller",
    "CallerTurn",
    "EndEvent",
    "SpeechSegment",
    "Timeline",
    "ToolCallRecord",
    "ToolEvent",
]
