"""Plans, execution and resume."""

from voxeval.runner.protocol import EvaluationProtocol, WorkUnit

__all__ = ["EvaluationProtocol", "WorkUnit"]
