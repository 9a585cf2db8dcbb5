"""The failure value of every metric and how exceptions of a system become fault causes."""

from __future__ import annotations

import json

import httpx
import pytest

from voxeval.errors import AudioError, SystemFault, VoxevalError, classify_system_fault
from voxeval.protocols.live_call import DIAGNOSTICS, default_metrics
from voxeval.protocols.single_turn import DEFAULT_METRICS as SINGLE_TURN_METRICS
from voxeval.registry import names
from voxeval.scoring.metric import metric_info
from voxeval.scoring.replies.checklist import CHECKLIST_TEMPLATE
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import (
    DESCRIPTIVE,
    FailureValue,
    failure_score,
    failure_scores,
    partial_call_score,
)


def test_every_default_metric_of_both_protocols_has_a_failure_entry() -> None:
    wanted = set(SINGLE_TURN_METRICS) | set(default_metrics()) | {"authentication_success"}
    wanted |= {m for m in DIAGNOSTICS if m in names("metric")}
    for metric in wanted:
        assert metric in names("metric"), metric
        info = metric_info(metric)
        assert info is not None, metric
        assert info.failure == DESCRIPTIVE or isinstance(info.failure, FailureValue), metric


def test_failure_values_are_the_worst_of_each_scale() -> None:
    checklist = failure_score("checklist", "timeout")
    assert checklist.value == CHECKLIST_TEMPLATE.min_score == 1.0
    assert checklist.details["system_fault"] == "timeout"
    assert failure_score("assertions", "exception") == Score(
        0.0, False, {"system_fault": "exception", "failure_value": "no assertion met"}
    )
    assert failure_score("mos", "no_audio").value == 1.0
    assert failure_score("wer", "no_audio").value == 1.0
    tc = failure_score("task_completion", "disconnect")
    assert (tc.value, tc.passed) == (0.0, False)
    assert failure_score("turn_taking", "timeout").value == 0.0


@pytest.mark.parametrize("metric", ["duration", "speaking_rate", "language", "response_latency"])
def test_descriptive_metrics_are_not_run_with_the_fault_as_reason(metric: str) -> None:
    score = failure_score(metric, "timeout")
    assert score.value is None and score.error == "system fault: timeout"
    assert not score.pending and score.details == {"system_fault": "timeout"}


def test_a_metric_without_an_entry_says_so() -> None:
    score = failure_scores(["plugin_metric"], "exception")["plugin_metric"]
    assert score.error is not None and "no failure value is defined" in score.error


def test_partial_call_keeps_what_ran_except_task_completion() -> None:
    ran = Score(0.7, True, {"turns": 3})
    kept = partial_call_score("turn_taking", ran, "exception")
    assert (kept.value, kept.details) == (0.7, {"turns": 3, "system_fault": "exception"})
    # a failed call never completes its task, even if the database happens to match
    assert partial_call_score("task_completion", Score(1.0, True), "exception").value == 0.0
    assert partial_call_score("stt_wer", Score.not_run("no speech"), "timeout").value == 1.0
    pending = Score.pending_retry("judge down")
    assert partial_call_score("turn_taking", pending, "timeout") is pending


class WrappedError(VoxevalError):
    """Like the HTTP system's error: a message of its own, the cause chained."""


def raised_from(exc: BaseException, wrapper: Exception) -> Exception:
    try:
        try:
            raise exc
        except BaseException as inner:
            raise wrapper from inner
    except Exception as outer:
        return outer


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (httpx.ReadTimeout("slow"), "timeout"),
        (TimeoutError("late"), "timeout"),
        (raised_from(httpx.ConnectTimeout("x"), WrappedError("request failed")), "timeout"),
        (raised_from(httpx.ConnectError("refused"), WrappedError("request failed")), "disconnect"),
        (ConnectionResetError("reset by peer"), "disconnect"),
        (
            raised_from(json.JSONDecodeError("bad", "{", 0), WrappedError("not JSON")),
            "malformed_output",
        ),
        (AudioError("empty WAV"), "malformed_output"),
        (RuntimeError("boom"), "exception"),
        (WrappedError("HTTP 500: overloaded"), "exception"),
        (SystemFault("said nothing", cause="no_audio"), "no_audio"),
    ],
)
def test_exceptions_are_classified_by_their_chain(exc: Exception, cause: str) -> None:
    fault = classify_system_fault(exc, "system 'x'")
    assert isinstance(fault, SystemFault) and fault.cause == cause


def test_classified_message_names_the_system_and_the_error() -> None:
    assert str(classify_system_fault(RuntimeError("boom"), "system 'x'")) == (
        "system 'x': RuntimeError: boom"
    )
    assert str(classify_system_fault(WrappedError("system 'x': HTTP 500"), "system 'x'")) == (
        "system 'x': HTTP 500"
    )


def test_a_new_metric_declares_its_failure_value_in_its_own_module() -> None:
    from voxeval.scoring.metric import metric

    @metric(
        "test_politeness",
        better="higher",
        failure=FailureValue(0.0, False, "nothing polite was said"),
        protocols=("live_call",),
    )
    def politeness(record: object, resources: object) -> Score:
        return Score(value=1.0)

    score = failure_score("test_politeness", "timeout")
    assert (score.value, score.passed) == (0.0, False)
    assert score.details == {"system_fault": "timeout", "failure_value": "nothing polite was said"}
    undeclared = failure_score("test_undeclared_metric", "timeout")
    assert not undeclared.ran
    assert "no failure value is defined" in (undeclared.error or "")
