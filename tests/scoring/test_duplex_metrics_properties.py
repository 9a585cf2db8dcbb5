"""Property tests of the full-duplex metrics on arbitrary timelines: rates and ratios stay in
[0, 1], latencies are non-negative, and shifting every time of a call by the same amount
changes nothing. Times are multiples of 1/64 s so that shifting them is exact in floating
point (ties between a start and an end stay ties)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.scoring.calls.duplex_metrics import (
    backchannel_rate,
    backchannel_yield_rate,
    barge_in_handling_rate,
    false_end_of_turn_rate,
    talk_over_ratio,
    yield_latency,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.score import Score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline

TICK = 1 / 64
RATES = (barge_in_handling_rate, backchannel_yield_rate, false_end_of_turn_rate, talk_over_ratio)
ALL = (*RATES, yield_latency, backchannel_rate)

_ticks = st.integers(min_value=0, max_value=64 * 40)
_lengths = st.integers(min_value=1, max_value=64 * 6)


@st.composite
def timelines(draw: st.DrawFn) -> Timeline:
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["user", "assistant"]),
                _ticks,
                _lengths,
                st.integers(min_value=0, max_value=3),  # turn
                st.booleans(),  # interrupted
                st.integers(min_value=0, max_value=3),  # backchannel when 0
            ),
            min_size=1,
            max_size=16,
        )
    )
    segments = [
        SpeakerSegment(
            speaker,  # type: ignore[arg-type]
            start * TICK,
            (start + length) * TICK,
            turn,
            interrupted=interrupted,
            backchannel=kind == 0,
        )
        for speaker, start, length, turn, interrupted, kind in rows
    ]
    last = max(s.end for s in segments)
    end_t = draw(st.sampled_from([last, last + 1.0]))  # the end may cut the last speech
    return Timeline(segments=segments, end=EndEvent(end_t, "user_end_call"))


def shifted(timeline: Timeline, by: float) -> Timeline:
    assert timeline.end is not None
    return Timeline(
        segments=[replace(s, start=s.start + by, end=s.end + by) for s in timeline.segments],
        end=replace(timeline.end, t=timeline.end.t + by),
    )


def _values(score: Score) -> tuple[float | None, str | None]:
    return score.value, score.error


@settings(max_examples=300, deadline=None)
@given(timelines())
def test_rates_and_ratios_stay_in_the_unit_interval(timeline: Timeline) -> None:
    record = LiveCallRecord(timeline=timeline)
    for metric in RATES:
        score = metric(record)
        assert score.value is None or 0.0 <= score.value <= 1.0, metric.__name__
        assert (score.value is None) == (score.error is not None)
    latency = yield_latency(record)
    assert latency.value is None or latency.value >= 0.0
    rate = backchannel_rate(record)
    assert rate.value is None or rate.value >= 0.0


@settings(max_examples=200, deadline=None)
@given(timelines(), st.integers(min_value=1, max_value=64 * 100))
def test_shifting_every_time_changes_nothing(timeline: Timeline, shift: int) -> None:
    before = LiveCallRecord(timeline=timeline)
    after = LiveCallRecord(timeline=shifted(timeline, shift * TICK))
    for metric in ALL:
        value, error = _values(metric(before))
        moved_value, moved_error = _values(metric(after))
        assert error == moved_error, metric.__name__
        if value is None:
            assert moved_value is None
        else:
            assert moved_value is not None
            assert abs(moved_value - value) <= 1e-6 * max(1.0, abs(value)), metric.__name__
