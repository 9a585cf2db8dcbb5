"""Evaluation protocols (plan, interact, score, summarise) and the contract the runner drives
them through; importing this package registers the built-in protocols."""

from voxeval.api.context import RunContext
from voxeval.protocols.contract import EvaluationProtocol, WorkUnit
from voxeval.protocols.live_call import LiveCallProtocol
from voxeval.protocols.multi_turn import MultiTurnProtocol, MultiTurnScoring
from voxeval.protocols.single_turn import DEFAULT_METRICS, SingleTurnProtocol, SingleTurnScoring

__all__ = [
    "DEFAULT_METRICS",
    "EvaluationProtocol",
    "LiveCallProtocol",
    "MultiTurnProtocol",
    "MultiTurnScoring",
    "RunContext",
    "SingleTurnProtocol",
    "SingleTurnScoring",
    "WorkUnit",
]
