"""Which way each metric is better: comparisons across systems depend on it."""

from __future__ import annotations

import pytest

from voxeval.errors import UnknownComponent
from voxeval.registry import names, register
from voxeval.scoring.metric_direction import better_when, metric_direction
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import DESCRIPTIVE, FAILURE_VALUES, FailureValue

# Typical good values per metric, to check that the failure value is the worse one.
GOOD_VALUES = {
    "checklist": 8.0, "assertions": 1.0, "mos": 4.0, "wer": 0.05,
    "task_completion": 1.0, "turn_taking": 0.9, "authentication_success": 1.0,
    "conversation_finished": 1.0, "tool_call_validity": 1.0, "key_entity_accuracy": 0.9,
    "stt_wer": 0.1, "agent_speech_fidelity_asr": 1.0,
}  # fmt: skip


def test_word_error_rates_are_better_lower_and_judge_scores_higher() -> None:
    assert metric_direction("wer") == "lower"
    assert metric_direction("stt_wer") == "lower"
    assert metric_direction("checklist") == "higher"
    assert metric_direction("mos") == "higher"
    assert metric_direction("duration") is None  # descriptive: no side is better
    assert metric_direction("speaking_rate") is None


def test_every_builtin_metric_with_a_worst_value_has_a_direction_that_makes_it_worst() -> None:
    for metric in names("metric"):
        entry = FAILURE_VALUES.get(metric)
        if entry is None or entry == DESCRIPTIVE:
            continue
        assert isinstance(entry, FailureValue)
        better = metric_direction(metric)
        assert better is not None, metric
        good = GOOD_VALUES[metric]
        assert (good > entry.value) if better == "higher" else (good < entry.value), metric


def test_a_plugin_metric_declares_its_direction() -> None:
    @register("metric", "test_latency_plugin")
    @better_when("lower")
    def latency(record: object, resources: object) -> Score:
        return Score(1.0)

    assert metric_direction("test_latency_plugin") == "lower"
    with pytest.raises(ValueError, match="higher"):
        better_when("bigger")  # type: ignore[arg-type]
    with pytest.raises(UnknownComponent):
        metric_direction("no_such_metric")
