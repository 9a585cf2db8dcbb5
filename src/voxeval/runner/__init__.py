"""Plans, execution and resume."""

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

__all__ = [
    "RetryPolicy",
    "RunHealth",
    "RunOutcome",
    "execute_units",
    "first_items",
    "open_context",
    "open_run",
    "rescore",
    "run_evaluation",
    "run_health",
]
