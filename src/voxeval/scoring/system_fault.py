"""What every metric scores when the system under test failed (``SystemFault``).

A fault of the system under test is a result, so its unit is scored, never dropped: each
metric with a meaningful worst value gets it (the judge scale's minimum, no assertion met,
the worst MOS, ...), marked ``details["system_fault"] = cause``. Purely descriptive metrics
(how long the reply was, how fast it was spoken, latency) have no worst value: they are
not-run with the reason ``system fault: <cause>``, and the summary counts the fault units per
cause so they stay visible. ``FAILURE_VALUES`` holds the built-in metrics' values; a new
metric declares its own with ``@failure_value(...)``.

Single-turn replies that failed have nothing to measure, so every metric takes its entry.
A live call that failed still left a partial call: metrics are computed on it where they
can be and fall back to their entry otherwise, except the ones marked ``always`` (a failed
call never completes its task, whatever the database looks like).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from voxeval.errors import UnknownComponent
from voxeval.registry import lookup
from voxeval.scoring.score import Score


@dataclass(frozen=True)
class FailureValue:
    """The score of a metric on a failed unit; ``basis`` says why this is the worst value."""

    value: float
    passed: bool | None
    basis: str
    always: bool = False  # live calls: even when the partial call could be scored


Descriptive = Literal["descriptive"]
DESCRIPTIVE: Final[Descriptive] = "descriptive"

FAILURE_VALUES: dict[str, FailureValue | Descriptive] = {
    # single-turn (WildSpeech)
    "checklist": FailureValue(1.0, None, "the minimum of the 1-10 judge scale"),
    "assertions": FailureValue(0.0, False, "no assertion met"),
    "mos": FailureValue(1.0, None, "the minimum of the 1-5 MOS scale"),
    "wer": FailureValue(1.0, None, "every word of the text channel missing from the speech"),
    "duration": DESCRIPTIVE,
    "speaking_rate": DESCRIPTIVE,
    "language": DESCRIPTIVE,
    # live calls (EVA-Bench)
    "task_completion": FailureValue(0.0, False, "the task is not completed", always=True),
    "turn_taking": FailureValue(0.0, False, "an unanswered user turn scores 0"),
    "authentication_success": FailureValue(0.0, False, "the caller was not authenticated"),
    "conversation_finished": FailureValue(0.0, False, "the call did not end by a hang-up"),
    "tool_call_validity": FailureValue(0.0, False, "no valid tool call"),
    "key_entity_accuracy": FailureValue(0.0, None, "no key entity heard correctly"),
    "stt_wer": FailureValue(1.0, None, "every word the caller said missed"),
    "response_latency": DESCRIPTIVE,
    "fallback_nudge_rate": DESCRIPTIVE,  # a failed call says nothing about reprompts
    "pre_tool_speech_rate": DESCRIPTIVE,
    "agent_speech_fidelity_asr": FailureValue(0.0, False, "no agent turn carried its entities"),
    "user_speech_fidelity_asr": DESCRIPTIVE,  # the caller is ours: a system fault says nothing
    # full-duplex turn handling: a call that failed before the event has nothing to measure
    "yield_latency": DESCRIPTIVE,
    "barge_in_handling_rate": DESCRIPTIVE,
    "backchannel_rate": DESCRIPTIVE,
    "backchannel_yield_rate": DESCRIPTIVE,
    "false_end_of_turn_rate": DESCRIPTIVE,
    "talk_over_ratio": DESCRIPTIVE,
    "false_yield_rate": DESCRIPTIVE,
    "agent_backchannel_rate": DESCRIPTIVE,
    "interruption_uptake": DESCRIPTIVE,
    "interruption_uptake_judge": DESCRIPTIVE,
}


F = TypeVar("F", bound=Callable[..., Any])


def failure_value(entry: FailureValue | Descriptive) -> Callable[[F], F]:
    """Declare, on a metric function, what it scores when the system under test failed, so a
    new metric module needs no entry in ``FAILURE_VALUES``:

        @register("metric", "politeness")
        @failure_value(FailureValue(0.0, False, "nothing polite was said"))
        def politeness(record, resources) -> Score: ...
    """

    def mark(metric: F) -> F:
        metric.failure_value = entry  # type: ignore[attr-defined]
        return metric

    return mark


def _failure_entry(metric: str) -> FailureValue | Descriptive | None:
    entry = FAILURE_VALUES.get(metric)
    if entry is not None:
        return entry
    try:
        declared = getattr(lookup("metric", metric), "failure_value", None)
    except UnknownComponent:
        return None
    return declared if isinstance(declared, FailureValue) or declared == DESCRIPTIVE else None


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
