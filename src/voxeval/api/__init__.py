"""The contract package: every extension point of voxeval, typed, in one place.

A protocol subclasses ``EvaluationProtocol`` (or ``ScoredProtocol`` to score with registered
metrics) and registers with ``PROTOCOLS``; it receives a ``RunContext`` and plans
``WorkUnit``s; comparison steps produce ``Comparison``s. A metric is registered with its
metadata by ``@metric``; a system with ``SYSTEMS.register`` (its components come from the
run's ``ProviderSource``); a provider with the kind of its family (``ASR_PROVIDERS``...).
"""

from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS, EvaluationProtocol, ReportSection, SystemSummary
from voxeval.api.scored_protocol import ScoredProtocol, StoredUnit
from voxeval.api.work_unit import WorkUnit
from voxeval.benchmarks.suite_info import SUITES, SuiteInfo
from voxeval.providers.factory import ProviderSource
from voxeval.providers.provider_kinds import (
    ASR_PROVIDERS,
    AUDIO_LLM_PROVIDERS,
    LLM_PROVIDERS,
    MOS_PROVIDERS,
    TTS_PROVIDERS,
    VAD_PROVIDERS,
)
from voxeval.scoring.metric import (
    DESCRIPTIVE,
    METRICS,
    FailureValue,
    Metric,
    MetricInfo,
    metric,
    metric_info,
)
from voxeval.scoring.score import Score
from voxeval.simulation.parties import CALLERS
from voxeval.simulation.perturbations import PERTURBATIONS
from voxeval.systems.base import SYSTEMS, Reply, SystemUnderTest, Turn, TurnSystem

__all__ = [
    "ASR_PROVIDERS",
    "AUDIO_LLM_PROVIDERS",
    "CALLERS",
    "DESCRIPTIVE",
    "LLM_PROVIDERS",
    "METRICS",
    "MOS_PROVIDERS",
    "PERTURBATIONS",
    "PROTOCOLS",
    "SUITES",
    "SYSTEMS",
    "TTS_PROVIDERS",
    "VAD_PROVIDERS",
    "Comparison",
    "EvaluationProtocol",
    "FailureValue",
    "Metric",
    "MetricInfo",
    "ProviderSource",
    "Reply",
    "ReportSection",
    "RunContext",
    "Score",
    "ScoredProtocol",
    "StoredUnit",
    "SuiteInfo",
    "SystemSummary",
    "SystemUnderTest",
    "Turn",
    "TurnSystem",
    "WorkUnit",
    "metric",
    "metric_info",
]
