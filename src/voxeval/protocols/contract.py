"""Moved to ``voxeval.api.protocol`` (the contract package); kept so existing imports work."""

from voxeval.api.protocol import PROTOCOLS, EvaluationProtocol, SystemSummary
from voxeval.api.work_unit import WorkUnit

__all__ = ["PROTOCOLS", "EvaluationProtocol", "SystemSummary", "WorkUnit"]
