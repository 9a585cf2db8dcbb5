"""False yields and the agent's own backchannels (issue 38, point 6), golden-tested on
hand-built timelines, with the cut marks they read (point 3)."""

from __future__ import annotations

import pytest

from voxeval.protocols.live_call import DIAGNOSTICS, default_metrics
from voxeval.scoring.calls.duplex_metrics import (
    agent_backchannel_rate,
    backchannel_yield_rate,
    false_yield_rate,
    yield_latency,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_direction import metric_direction
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline


def user(start: float, end: float, turn: int, text: str = "I need to move it", **kw: object):  # type: ignore[no-untyped-def]
    return SpeakerSegment("user", start, end, turn, text, **kw)  # type: ignore[arg-type]


def agent(start: float, end: float, turn: int, reason: str | None = None, **kw: object):  # type: ignore[no-untyped-def]
    return SpeakerSegment(
        "assistant", start, end, turn, "I can help with that. What is your ID?",
        interrupted=reason is not None, cut_reason=reason,
        spoken_text="I can" if reason else "", **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def record(*segments: SpeakerSegment, end_t: float = 30.0) -> LiveCallRecord:
    return LiveCallRecord(
        timeline=Timeline(segments=list(segments), end=EndEvent(end_t, "user_end_call"))
    )


def test_a_stop_on_noise_is_a_false_yield_and_a_barge_in_is_not() -> None:
    # greeting 0-1; caller 1.5-3.0; the reply 3.5-3.8 stops with nothing on the line (noise);
    # the next reply 5.0-6.2 stops for the caller's barge-in at 5.8
    rec = record(
        agent(0.0, 1.0, 0), user(1.5, 3.0, 0), agent(3.5, 3.8, 1, "no_caller_speech"),
        agent(5.0, 6.2, 2, "caller_speech"), user(5.8, 7.0, 1), agent(7.6, 8.0, 3),
    )  # fmt: skip
    score = false_yield_rate(rec)
    assert score.value == pytest.approx(1 / 4)
    (stop,) = score.details["per_stop"]
    assert stop["after_ms"] == pytest.approx(300.0) and stop["spoken_text"] == "I can"


def test_a_stop_by_the_call_end_is_no_yield() -> None:
    rec = record(agent(0.0, 1.0, 0), user(1.5, 3.0, 0), agent(3.5, 5.0, 1, "call_end"), end_t=5.0)
    assert false_yield_rate(rec).value == 0.0
    # nor a yield to anything for the barge-in metrics
    rec = record(
        agent(0.0, 1.0, 0), user(1.5, 3.0, 0), agent(3.5, 5.0, 1, "call_end"),
        user(4.0, 5.0, 1), end_t=5.0,
    )  # fmt: skip
    assert not yield_latency(rec).ran


def test_a_noise_stop_after_a_backchannel_is_not_a_backchannel_yield() -> None:
    # a backchannel at 4.0 and the agent stopping at 7.9 on noise: recorded as no_caller_speech
    rec = record(
        agent(0.0, 1.0, 0), user(1.5, 3.0, 0), agent(3.5, 7.9, 1, "no_caller_speech"),
        user(4.0, 4.4, 0, "mm-hm", backchannel=True), user(9.0, 10.0, 1),
    )  # fmt: skip
    assert backchannel_yield_rate(rec).value == 0.0
    assert false_yield_rate(rec).value == pytest.approx(1 / 2)
    # recorded as a stop for the backchannel, it is one
    rec.timeline.segments[2] = agent(3.5, 4.5, 1, "backchannel")  # type: ignore[union-attr]
    assert backchannel_yield_rate(rec).value == 1.0


def test_agent_backchannels_are_counted_and_timed() -> None:
    # the caller speaks 1.0-7.0 (6 s); the agent says "mm-hm" at 3.0 and 5.0 over it
    rec = record(
        user(1.0, 7.0, 0), agent(7.6, 9.0, 0),
        SpeakerSegment("assistant", 3.0, 3.4, 0, "mm-hm", backchannel=True),
        SpeakerSegment("assistant", 5.0, 5.3, 0, "right", backchannel=True),
    )  # fmt: skip
    score = agent_backchannel_rate(rec)
    assert score.value == pytest.approx(2 / (6 / 60))
    assert score.details["over_caller_speech"] == 2
    assert [t["start"] for t in score.details["times"]] == [3.0, 5.0]
    assert agent_backchannel_rate(record(user(1.0, 2.0, 0))).value == 0.0
    assert not agent_backchannel_rate(record(agent(0.0, 1.0, 0))).ran


def test_the_new_metrics_are_defaults_with_directions() -> None:
    for name in ("false_yield_rate", "agent_backchannel_rate"):
        assert name in DIAGNOSTICS and name in default_metrics()
    assert metric_direction("false_yield_rate") == "lower"
