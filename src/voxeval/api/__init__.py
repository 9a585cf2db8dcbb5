"""The contract package: every extension point of voxeval, typed, in one place.

A protocol subclasses ``EvaluationProtocol`` and registers with ``PROTOCOLS``; it receives
a ``RunContext`` and plans ``WorkUnit``s; comparison steps produce ``Comparison``s.
"""

from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS, EvaluationProtocol, ReportSection, SystemSummary
from voxeval.api.work_unit import WorkUnit

__all__ = [
    "PROTOCOLS",
    "Comparison",
    "EvaluationProtocol",
    "ReportSection",
    "RunContext",
    "SystemSummary",
    "WorkUnit",
]
