"""Plans, execution and resume."""

from voxeval.runner.context import RunContext
from voxeval.runner.execute import (
    RunOutcome,
    execute_units,
    first_items,
    open_context,
    open_run,
    rescore,
    run_evaluation,
)
from voxeval.runner.faults import RetryPolicy
from voxeval.runner.health import RunHealth, run_health
from voxeval.runner.protocol import EvaluationProtocol, WorkUnit
from voxeval.runner.single_turn import DEFAULT_METRICS, SingleTurnProtocol, SingleTurnScoring

__all__ = [
    "DEFAULT_METRICS",
    "EvaluationProtocol",
    "RetryPolicy",
    "RunContext",
    "RunHealth",
    "RunOutcome",
    "SingleTurnProtocol",
    "SingleTurnScoring",
    "WorkUnit",
    "execute_units",
    "first_items",
    "open_context",
    "open_run",
    "rescore",
    "run_evaluation",
    "run_health",
]
