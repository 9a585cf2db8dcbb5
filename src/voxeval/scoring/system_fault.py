"""What every metric scores when the system under test failed (``SystemFault``).

A fault of the system under test is a result, so its unit is scored, never dropped: each
metric with a meaningful worst value gets it (the judge scale's minimum, no assertion met,
the worst MOS, ...), marked ``details["system_fault"] = cause``. Purely descriptive metrics
(how long the reply was, how fast it was spoken, latency) have no worst value: they are
not-run with the reason ``system fault: <cause>``, and the summary counts the fault units per
cause so they stay visible. Each metric declares its value where it is registered
(``@metric(NAME, failure=...)``, ``voxeval.scoring.metric``).

Single-turn replies that failed have nothing to measure, so every metric takes its entry.
A live call that failed still left a partial call: metrics are computed on it where they
can be and fall back to their entry otherwise, except the ones marked ``always`` (a failed
call never completes its task, whatever the database looks like).
"""

from __future__ import annotations

from collections.abc import Iterable

from voxeval.errors import UnknownComponent
from voxeval.scoring.metric import DESCRIPTIVE, Descriptive, FailureValue, metric_info
from voxeval.scoring.score import Score

__all__ = [
    "DESCRIPTIVE",
    "NOT_APPLICABLE",
    "Descriptive",
    "FailureValue",
    "failure_score",
    "failure_scores",
    "partial_call_score",
    "system_fault_reason",
]


def _failure_entry(metric: str) -> FailureValue | Descriptive | None:
    try:
        info = metric_info(metric)
    except UnknownComponent:
        return None
    return None if info is None else info.failure


# Set in a not-run score's details when the metric cannot run on this kind of call at all,
# fault or no fault (a text-mode call has no audio): a failed call then gets no failure value
# that no other call of the run could get.
NOT_APPLICABLE = "not_applicable"


def system_fault_reason(cause: str) -> str:
    return f"system fault: {cause}"


def failure_score(metric: str, cause: str) -> Score:
    """The score of ``metric`` on a unit whose system under test failed with ``cause``."""
    entry = _failure_entry(metric)
    if isinstance(entry, FailureValue):
        details = {"system_fault": cause, "failure_value": entry.basis}
        return Score(value=entry.value, passed=entry.passed, details=details)
    reason = system_fault_reason(cause)
    if entry is None:  # a plugin metric without an entry: say so rather than guess a value
        reason += " (no failure value is defined for this metric)"
    return Score.not_run(reason, system_fault=cause)


def failure_scores(metrics: Iterable[str], cause: str) -> dict[str, Score]:
    return {metric: failure_score(metric, cause) for metric in metrics}


def partial_call_score(metric: str, computed: Score, cause: str) -> Score:
    """A live-call metric computed on the partial call of a failed system: kept where it ran
    (and its entry does not say ``always``), pending work stays pending, a metric that cannot
    run on such a call at all (``not_applicable``: a text-mode call has no audio, the agent
    exposes no transcript) stays not run as on every other call, otherwise the metric's
    failure score."""
    entry = _failure_entry(metric)
    forced = isinstance(entry, FailureValue) and entry.always
    if computed.pending:
        return computed
    if not computed.ran and computed.details.get(NOT_APPLICABLE) and not forced:
        return Score.not_run(computed.error or "", **{**computed.details, "system_fault": cause})
    if computed.ran and not forced:
        return Score(
            value=computed.value,
            passed=computed.passed,
            details={**computed.details, "system_fault": cause},
        )
    return failure_score(metric, cause)
