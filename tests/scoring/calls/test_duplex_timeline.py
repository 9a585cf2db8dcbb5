"""The full-duplex events read from a timeline, and the span arithmetic behind them."""

from __future__ import annotations

import pytest

from voxeval.scoring.calls.duplex_timeline import (
    BargeIn,
    barge_ins,
    caller_pauses,
    covered_s,
    heard_backchannels,
    overlap_s,
    union,
)
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline


def seg(speaker: str, start: float, end: float, turn: int = 0, **flags: bool) -> SpeakerSegment:
    return SpeakerSegment(speaker, start, end, turn, **flags)  # type: ignore[arg-type]


def test_span_arithmetic() -> None:
    assert union([(3.0, 4.0), (0.0, 1.0), (0.5, 2.0), (2.0, 2.5), (5.0, 5.0)]) == [
        (0.0, 2.5),
        (3.0, 4.0),
    ]
    assert covered_s([(0.0, 1.0), (0.5, 2.0)]) == 2.0
    # overlapping spans within one side are counted once
    assert overlap_s([(0.0, 2.0), (1.0, 3.0)], [(1.5, 4.0)]) == pytest.approx(1.5)
    assert overlap_s([(0.0, 1.0)], [(1.0, 2.0)]) == 0.0  # touching is not overlapping


def test_barge_ins_name_the_agent_segment_and_how_it_ended() -> None:
    timeline = Timeline(
        segments=[
            seg("assistant", 1.0, 3.0, 0, interrupted=True),
            seg("user", 2.0, 4.0, 1),  # over the first reply, which yielded
            seg("user", 2.5, 2.7, 1, backchannel=True),  # not a barge-in
            seg("assistant", 5.0, 9.0, 1),
            seg("user", 8.0, 9.0, 2),  # over the second, which the call end cut
            seg("user", 9.0, 9.5, 2),  # starts as the agent stops: not over it
        ],
        end=EndEvent(9.0, "user_end_call"),
    )
    assert barge_ins(timeline) == [
        BargeIn(1, 2.0, 1.0, 3.0, yielded=True, cut_by_call_end=False),
        BargeIn(2, 8.0, 5.0, 9.0, yielded=False, cut_by_call_end=True),
    ]
    assert barge_ins(timeline)[0].stop_ms == pytest.approx(1000.0)


def test_heard_backchannels_know_the_agent_span_they_were_said_over() -> None:
    timeline = Timeline(
        segments=[
            seg("assistant", 1.0, 4.0, 0, interrupted=True),
            seg("user", 2.0, 2.3, 0, backchannel=True),
            seg("user", 3.5, 3.8, 0, backchannel=True),
            seg("user", 6.0, 6.2, 0, backchannel=True),  # said into silence
        ]
    )
    heard = heard_backchannels(timeline)
    assert [(b.agent_span, b.agent_yielded) for b in heard] == [
        ((1.0, 4.0), False),
        ((1.0, 4.0), True),  # the last one before the agent's early stop
        (None, False),
    ]


def test_caller_pauses_are_gaps_inside_one_caller_turn() -> None:
    timeline = Timeline(
        segments=[
            seg("user", 0.0, 1.0, 0),
            seg("user", 1.5, 2.0, 0),  # pause 1.0-1.5, the agent starts at 1.2
            seg("assistant", 1.2, 1.4, 0),
            seg("user", 3.0, 4.0, 1),  # a new caller turn: the gap 2.0-3.0 is no pause
            seg("user", 4.0, 4.5, 1),  # touching pieces: no pause
            seg("user", 4.6, 4.7, 1, backchannel=True),
            seg("user", 5.0, 6.0, 1),  # pause 4.5-5.0 (the backchannel is not a piece)
        ]
    )
    pauses = caller_pauses(timeline)
    assert [
        (p.turn, p.start, p.end, p.resumed_until, p.agent_onset, p.agent_speaking) for p in pauses
    ] == [
        (0, 1.0, 1.5, 2.0, 1.2, False),
        (1, 4.5, 5.0, 6.0, None, False),
    ]
