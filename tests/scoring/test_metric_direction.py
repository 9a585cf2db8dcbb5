"""Which way each metric is better: comparisons across systems depend on it."""

from __future__ import annotations

import pytest

from voxeval.errors import UnknownComponent
from voxeval.registry import names
from voxeval.scoring.metric import DESCRIPTIVE, METRICS, FailureValue, metric, metric_info
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.score import Score

# Typical good values per metric, to check that the failure value is the worse one.
GOOD_VALUES = {
    "checklist": 8.0, "assertions": 1.0, "mos": 4.0, "wer": 0.05,
    "task_completion": 1.0, "turn_taking": 0.9, "authentication_success": 1.0,
    "conversation_finished": 1.0, "tool_call_validity": 1.0, "key_entity_accuracy": 0.9,
    "stt_wer": 0.1, "agent_speech_fidelity_asr": 1.0, "agent_speech_fidelity": 1.0,
    "conciseness": 0.8, "conversation_progression": 0.8, "faithfulness": 0.9,
    "rubric": 0.7, "rubric_turns": 0.7,
}  # fmt: skip


def test_word_error_rates_are_better_lower_and_judge_scores_higher() -> None:
    assert metric_direction("wer") == "lower"
    assert metric_direction("stt_wer") == "lower"
    assert metric_direction("checklist") == "higher"
    assert metric_direction("mos") == "higher"
    assert metric_direction("duration") is None  # descriptive: no side is better
    assert metric_direction("speaking_rate") is None


def test_every_builtin_metric_with_a_worst_value_has_a_direction_that_makes_it_worst() -> None:
    # built-in metrics only: a test elsewhere in the same worker may have registered its own
    for name in names("metric"):
        if not METRICS.lookup(name).__module__.startswith("voxeval."):
            continue
        info = metric_info(name)
        entry = None if info is None else info.failure
        if entry is None or entry == DESCRIPTIVE:
            continue
        assert isinstance(entry, FailureValue)
        better = metric_direction(name)
        assert better is not None, name
        good = GOOD_VALUES[name]
        assert (good > entry.value) if better == "higher" else (good < entry.value), name


def test_a_plugin_metric_declares_its_direction() -> None:
    @metric("test_latency_plugin", better="lower", failure=DESCRIPTIVE, protocols=())
    def latency(record: object, resources: object) -> Score:
        return Score(1.0)

    assert metric_direction("test_latency_plugin") == "lower"
    with pytest.raises(ValueError, match="higher"):
        metric("test_bigger", better="bigger", failure=None, protocols=())  # type: ignore[arg-type]
    with pytest.raises(UnknownComponent):
        metric_direction("no_such_metric")
