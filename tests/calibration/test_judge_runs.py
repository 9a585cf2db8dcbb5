"""The per-metric summary: judge failures are counted and listed but never scored, examples
without a label for a dimension are left out of it, parse failures are summed."""

from __future__ import annotations

import pytest

from voxeval.calibration.dev_set import CalibrationExample, Expected
from voxeval.calibration.judge_runs import JudgedExample, metric_summary, unreachable
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.score import Score

DIMS = METRIC_LABELS["conversation_progression"].dimensions


def example(n: int, defect: bool, info_loss: bool | None) -> CalibrationExample:
    labels: dict[str, bool | None] = dict.fromkeys(DIMS, False)
    labels["information_loss"] = info_loss
    return CalibrationExample(
        example_id=f"conversation_progression/s{n}/{'redundant_question' if defect else 'clean'}",
        metric="conversation_progression",
        scenario_id=f"s{n}",
        domain="clinic",
        defect="redundant_question" if defect else "clean",
        record=LiveCallRecord(),
        expected=Expected(defect, labels),
    )


def answered(
    ex: CalibrationExample, info_loss_rating: int, parse_failures: int = 0
) -> JudgedExample:
    ratings = {**dict.fromkeys(DIMS, 3), "information_loss": info_loss_rating}
    passed = info_loss_rating > 1
    score = Score(
        value=1.0 if passed else 0.0,
        passed=passed,
        details={"dimensions": ratings, "parse_failures": parse_failures},
    )
    metric = METRIC_LABELS["conversation_progression"]
    return JudgedExample(ex, score, metric.verdict(score))


def test_summary_counts_failures_apart_and_skips_unlabelled_dimensions() -> None:
    judged = [
        answered(example(1, True, True), 1, parse_failures=1),  # caught
        answered(example(2, True, None), 3),  # missed; no dimension label
        answered(example(3, False, False), 3),  # clean, passed
        answered(example(4, False, False), 2),  # clean, flagged but still passing
        JudgedExample(
            example(5, True, True),
            Score.pending_retry("judge output malformed", parse_failures=3),
            None,
        ),
    ]
    summary = metric_summary("conversation_progression", judged)
    assert summary["examples"] == 5 and summary["n"] == 4
    assert summary["judge_failures"] == 1
    assert summary["failures"] == [
        {"id": "conversation_progression/s5/redundant_question", "reason": "judge output malformed"}
    ]
    assert summary["parse_failures"] == 4
    assert summary["accuracy"] == pytest.approx(3 / 4)
    assert summary["confusion"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 2}
    assert summary["by_defect"] == {
        "clean": {"n": 2, "flagged": 0, "severity": None},
        "redundant_question": {"n": 2, "flagged": 1, "severity": "obvious"},
    }
    info = summary["dimensions"]["information_loss"]
    assert info["n"] == 3  # the unlabelled example is left out
    assert info["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 1}
    assert not unreachable(summary)


def test_a_metric_with_no_answer_is_unreachable() -> None:
    failed = JudgedExample(example(1, False, False), Score.pending_retry("connect failed"), None)
    summary = metric_summary("conversation_progression", [failed])
    assert summary["n"] == 0 and summary["accuracy"] is None and unreachable(summary)
