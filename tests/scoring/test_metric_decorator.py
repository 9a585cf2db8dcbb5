"""Every metric is registered by one decorator carrying its metadata (direction, failure
value, protocols, modes): no central table elsewhere, and the metadata matches the record type
the metric scores."""

from __future__ import annotations

import pytest

from voxeval.registry import names
from voxeval.runner.plan_check import metric_record_type
from voxeval.scoring.metric import METRICS, FailureValue, metric, metric_info
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import failure_score

RECORD_PROTOCOLS = {
    "ReplyRecord": {"single_turn"},
    "DialogueRecord": {"multi_turn"},
    "LiveCallRecord": {"live_call"},
}


def test_every_builtin_metric_declares_its_metadata_where_it_is_registered() -> None:
    builtin = [n for n in names("metric") if METRICS.lookup(n).__module__.startswith("voxeval.")]
    assert len(builtin) >= 39
    for name in builtin:
        info = metric_info(name)
        assert info is not None, f"{name} is registered without @metric"
        assert info.name == name
        record = metric_record_type(METRICS.lookup(name))
        expected = RECORD_PROTOCOLS.get(record.__name__ if record else "", set())
        assert info.protocols == expected, name


def test_audio_only_metrics_say_so() -> None:
    for name in ("agent_speech_fidelity", "user_speech_fidelity_asr"):
        info = metric_info(name)
        assert info is not None and info.modes == frozenset({"audio"})
    wer = metric_info("stt_wer")
    assert wer is not None and wer.modes is None  # every mode


def test_the_decorator_registers_and_declares_in_one_place() -> None:
    @metric(
        "test_decorated_metric",
        better="lower",
        failure=FailureValue(1.0, None, "every word missed", always=True),
        protocols=("live_call",),
        modes=("text", "audio"),
    )
    def decorated(record: object, resources: object) -> Score:
        return Score(0.25)

    assert METRICS.lookup("test_decorated_metric") is decorated
    info = metric_info("test_decorated_metric")
    assert info is not None
    assert (info.better, info.protocols, info.modes) == (
        "lower",
        frozenset({"live_call"}),
        frozenset({"text", "audio"}),
    )
    assert failure_score("test_decorated_metric", "timeout").value == 1.0
    with pytest.raises(ValueError, match="FailureValue or DESCRIPTIVE"):
        metric("test_bad_failure", better=None, failure=0.0, protocols=())  # type: ignore[arg-type]
