"""The contract package: every extension point of voxeval, typed, in one place.

A protocol subclasses ``EvaluationProtocol`` (or ``ScoredProtocol`` to score with registered
metrics) and registers with ``PROTOCOLS``; it receives a ``RunContext`` and plans
``WorkUnit``s; comparison steps produce ``Comparison``s. A metric is registered with its
metadata by ``@metric``; a system with ``SYSTEMS.register`` (its components come from the
run's ``ProviderSource``); a provider with the kind of its family (``ASR_PROVIDERS``...).

Each extension point has a typed contract (a Protocol) and a base class with the default of
every optional member, so nothing probes a plugin with ``getattr``: ``ProviderBase``
(``LLMBase``, ``VADBase``), ``SystemBase``, ``CallAgentBase``, ``CallerBase``,
``CallerBehaviourBase`` and ``PerturbationBase``.
"""

from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS, EvaluationProtocol, ReportSection, SystemSummary
from voxeval.api.scored_protocol import ScoredProtocol, StoredUnit
from voxeval.api.work_unit import WorkUnit
from voxeval.benchmarks.suite_info import SUITES, SuiteInfo
from voxeval.providers.base import LLMBase, ProviderBase, VADBase
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
from voxeval.simulation.caller_behaviour import CallerBehaviourBase
from voxeval.simulation.parties import CALLERS, Caller, CallerBase
from voxeval.simulation.perturbations import PERTURBATIONS, Perturbation, PerturbationBase
from voxeval.systems.base import (
    SYSTEMS,
    Reply,
    SystemBase,
    SystemContext,
    SystemUnderTest,
    Turn,
    TurnSystem,
)
from voxeval.systems.call import CallAgent, CallAgentBase, StreamingCallAgent

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
    "CallAgent",
    "CallAgentBase",
    "Caller",
    "CallerBase",
    "CallerBehaviourBase",
    "Comparison",
    "EvaluationProtocol",
    "FailureValue",
    "LLMBase",
    "Metric",
    "MetricInfo",
    "Perturbation",
    "PerturbationBase",
    "ProviderBase",
    "ProviderSource",
    "Reply",
    "ReportSection",
    "RunContext",
    "Score",
    "ScoredProtocol",
    "StoredUnit",
    "StreamingCallAgent",
    "SuiteInfo",
    "SystemBase",
    "SystemContext",
    "SystemSummary",
    "SystemUnderTest",
    "Turn",
    "TurnSystem",
    "VADBase",
    "WorkUnit",
    "metric",
    "metric_info",
]
