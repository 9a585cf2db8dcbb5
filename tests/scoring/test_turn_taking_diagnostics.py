"""Golden timelines for the turn diagnostics: fallback-nudge rate and pre-tool speech rate,
and the ``nudge`` field of recorded calls (old events files still read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxeval.registry import lookup
from voxeval.scoring.calls.call_diagnostics import fallback_nudge_rate, pre_tool_speech_rate
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.system_fault import failure_score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent


def user(start: float, end: float) -> SpeakerSegment:
    return SpeakerSegment("user", start, end, 0, intended_text="hi", transcript="hi")


def agent(start: float, end: float, nudge: bool = False) -> SpeakerSegment:
    return SpeakerSegment("assistant", start, end, 0, intended_text="ok", nudge=nudge)


def tool(t: float) -> ToolEvent:
    return ToolEvent(t=t, turn=0, name="lookup", arguments={}, result={}, kind="read")


def nudged_call() -> Timeline:
    return Timeline(
        segments=[
            agent(0.0, 1.0),  # greeting, turn 0
            user(1.5, 3.0),
            agent(3.6, 5.0),  # turn 1
            user(5.5, 7.0),  # the agent's turn detection drops this ...
            agent(11.0, 12.0, nudge=True),  # ... and it reprompts: turn 2
            user(12.5, 14.0),
            agent(14.6, 16.0),  # turn 3
        ],
        end=EndEvent(17.0, "user_end_call"),
    )


def test_fallback_nudge_rate() -> None:
    score = fallback_nudge_rate(LiveCallRecord(timeline=nudged_call()))
    assert score.value == pytest.approx(1 / 3)  # agent turns 1, 2, 3; a nudge in turn 2
    assert score.details == {"agent_turns": 3, "nudge_turns": [2]}


def test_pre_tool_speech_rate() -> None:
    timeline = Timeline(
        segments=[
            agent(0.0, 1.0),
            user(1.5, 3.0),
            agent(3.5, 4.2),  # turn 1: "let me check" before the tool call at 4.5
            agent(5.0, 6.0),
            user(6.5, 8.0),
            agent(9.0, 10.0),  # turn 2: the tool call at 8.3 came first
        ],
        tools=[tool(4.5), tool(8.3)],
        end=EndEvent(11.0, "agent_end_call"),
    )
    score = pre_tool_speech_rate(LiveCallRecord(timeline=timeline))
    assert score.value == pytest.approx(0.5)  # 1 of the 2 tool turns
    assert score.details == {"tool_turns": [1, 2], "pre_tool_speech_turns": [1]}


def test_diagnostics_not_run_without_their_inputs() -> None:
    no_tools = Timeline(segments=[agent(0.0, 1.0), user(1.5, 2.0), agent(2.5, 3.0)])
    assert pre_tool_speech_rate(LiveCallRecord(timeline=no_tools)).error
    greeting_only = Timeline(segments=[agent(0.0, 1.0)])
    assert fallback_nudge_rate(LiveCallRecord(timeline=greeting_only)).error
    assert fallback_nudge_rate(LiveCallRecord()).error


def test_registered_with_their_direction_and_failure_value() -> None:
    assert lookup("metric", "fallback_nudge_rate") is fallback_nudge_rate
    assert lookup("metric", "pre_tool_speech_rate") is pre_tool_speech_rate
    assert metric_direction("fallback_nudge_rate") == "lower"
    assert metric_direction("pre_tool_speech_rate") is None  # descriptive
    assert failure_score("fallback_nudge_rate", "timeout").value is None


def test_nudge_flag_round_trips_and_old_events_files_still_read(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    nudged_call().write_jsonl(events)
    assert [s.nudge for s in Timeline.read_jsonl(events).segments].count(True) == 1
    old = tmp_path / "old.jsonl"
    rows = [json.loads(line) for line in events.read_text().splitlines()]
    for row in rows:
        row.pop("nudge", None)  # written before the field existed
    old.write_text("".join(json.dumps(r) + "\n" for r in rows))
    timeline = Timeline.read_jsonl(old)
    assert not any(s.nudge for s in timeline.segments)
    assert fallback_nudge_rate(LiveCallRecord(timeline=timeline)).value == 0.0
