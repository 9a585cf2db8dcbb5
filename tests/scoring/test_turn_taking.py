"""Golden timelines with hand-computed turn-taking scores (EVA-Bench breakpoints)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxeval.registry import lookup
from voxeval.scoring.live_call_record import LiveCallRecord
from voxeval.scoring.turn_taking import (
    latency_score,
    timing_bucket,
    turn_taking,
    turn_taking_score,
    yield_score,
)
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent


def user(start: float, end: float, turn: int, text: str = "hello") -> SpeakerSegment:
    return SpeakerSegment("user", start, end, turn, intended_text=text, transcript=text)


def agent(start: float, end: float, turn: int, interrupted: bool = False) -> SpeakerSegment:
    return SpeakerSegment(
        "assistant", start, end, turn, intended_text="ok", interrupted=interrupted
    )


def tool(t: float, turn: int) -> ToolEvent:
    return ToolEvent(t=t, turn=turn, name="lookup", arguments={}, result={}, kind="read")


def one_exchange(latency_s: float, tools: list[ToolEvent] | None = None) -> Timeline:
    """Greeting, one user turn 1.0-3.0 s, the agent answering ``latency_s`` after it ends."""
    return Timeline(
        segments=[
            agent(0.0, 0.8, 0),
            user(1.0, 3.0, 0),
            agent(3.0 + latency_s, 5.0 + latency_s, 1),
        ],
        tools=tools or [],
        end=EndEvent(t=9.0, reason="agent_end_call"),
    )


@pytest.mark.parametrize(
    ("latency_ms", "tool_call", "expected"),
    [
        (-600, False, 0.0),
        (-500, False, 0.0),
        (0, False, 0.5),
        (100, False, 0.6),
        (500, False, 1.0),
        (2000, False, 1.0),
        (2750, False, 0.5),
        (3500, False, 0.0),
        (9000, False, 0.0),
        (3000, True, 1.0),
        (4000, True, 0.5),
        (5000, True, 0.0),
        (-250, True, 0.25),
    ],
)
def test_latency_curve_breakpoints(latency_ms: float, tool_call: bool, expected: float) -> None:
    assert latency_score(latency_ms, tool_call) == pytest.approx(expected)


def test_yield_and_buckets() -> None:
    assert yield_score(0) == 1.0
    assert yield_score(500) == pytest.approx(0.75)
    assert yield_score(2500) == 0.0
    assert timing_bucket(199, False) == "early"
    assert timing_bucket(200, False) == "on_time"
    assert timing_bucket(2749, False) == "on_time"
    assert timing_bucket(2750, False) == "late"
    assert timing_bucket(3999, True) == "on_time"
    assert timing_bucket(4000, True) == "late"


def test_on_time_conversation_scores_one() -> None:
    timeline = Timeline(
        segments=[
            agent(0.0, 1.5, 0),
            user(2.0, 4.0, 0),
            agent(4.8, 7.0, 1),  # 800 ms
            user(7.5, 9.0, 1),
            agent(9.6, 10.5, 2),  # 600 ms
            user(10.8, 11.0, 2),  # "bye", then the caller hangs up: not a timeout
        ],
        end=EndEvent(t=11.2, reason="user_end_call"),
    )
    score = turn_taking_score(timeline)
    assert score.value == pytest.approx(1.0)
    assert score.passed is True
    turns = score.details["turns"]
    assert [t["condition"] for t in turns] == [
        "uninterrupted",
        "uninterrupted",
        "unanswered_at_end",
    ]
    assert turns[0]["latency_ms"] == pytest.approx(800)
    assert score.details["bucket_counts"] == {"early": 0, "on_time": 2, "late": 0}


def test_early_turn() -> None:
    score = turn_taking_score(one_exchange(0.1))  # 100 ms: (100 + 500) / 1000
    assert score.value == pytest.approx(0.6)
    assert score.passed is False
    assert score.details["bucket_counts"]["early"] == 1


def test_late_turn() -> None:
    score = turn_taking_score(one_exchange(2.75))  # (3500 - 2750) / 1500
    assert score.value == pytest.approx(0.5)
    assert score.details["bucket_counts"]["late"] == 1


def test_tool_call_turn_uses_lenient_breakpoints() -> None:
    with_tool = turn_taking_score(one_exchange(4.0, [tool(3.5, 1)]))  # (5000 - 4000) / 2000
    assert with_tool.value == pytest.approx(0.5)
    assert with_tool.details["turns"][0]["tool_call"] is True
    assert with_tool.details["bucket_counts"]["late"] == 1  # >= 4000 ms with a tool call
    without = turn_taking_score(one_exchange(4.0))
    assert without.value == pytest.approx(0.0)
    on_time = turn_taking_score(one_exchange(2.9, [tool(3.2, 1)]))  # inside the tool window
    assert on_time.value == pytest.approx(1.0)


def test_agent_interrupts_user() -> None:
    # user speaks 0-4 s; the agent barges in 3.0-3.5 (500 ms overlap, one barge-in) and then
    # answers 600 ms after the user stops
    timeline = Timeline(
        segments=[user(0.0, 4.0, 0), agent(3.0, 3.5, 0), agent(4.6, 6.0, 1)],
        end=EndEvent(t=7.0, reason="agent_end_call"),
    )
    score = turn_taking_score(timeline)
    overlap, count, recovery = 1 - 500 / 2000, 1 - 1 / 3, 1.0
    assert score.value == pytest.approx(0.5 * (overlap + count + recovery) / 3)  # 0.40278
    turn = score.details["turns"][0]
    assert turn["condition"] == "agent_interrupted"
    assert turn["measures"] == {"overlap_ms": pytest.approx(500), "barge_ins": 1.0}


def test_agent_interruption_without_settled_response_omits_recovery() -> None:
    # the agent starts at 3.0 and is still talking when the user stops at 4.0
    timeline = Timeline(
        segments=[user(0.0, 4.0, 0), agent(3.0, 5.0, 0)], end=EndEvent(5.5, "agent_end_call")
    )
    score = turn_taking_score(timeline)
    assert score.value == pytest.approx(0.5 * ((1 - 1000 / 2000) + (1 - 1 / 3)) / 2)  # 0.29167
    assert "post_interrupt" not in score.details["turns"][0]["sub_scores"]


def test_three_barge_ins_zero_the_count_sub_score() -> None:
    timeline = Timeline(
        segments=[
            user(0.0, 6.0, 0),
            agent(1.0, 1.2, 0),
            agent(2.0, 2.2, 1),
            agent(3.0, 3.2, 2),
            agent(6.5, 7.0, 3),
        ],
        end=EndEvent(8.0, "agent_end_call"),
    )
    turn = turn_taking_score(timeline).details["turns"][0]
    assert turn["sub_scores"]["barge_in_count"] == 0.0
    assert turn["sub_scores"]["overlap"] == pytest.approx(1 - 600 / 2000)
    assert turn["score"] == pytest.approx(0.5 * (0.0 + 0.7 + 1.0) / 3)


def test_user_interrupts_agent() -> None:
    # the agent answers turn 0 at 2.5 s; the caller cuts in at 6.0; the agent stops at 6.5
    timeline = Timeline(
        segments=[
            user(0.0, 2.0, 0),
            agent(2.5, 6.5, 1, interrupted=True),
            user(6.0, 7.0, 1),
            agent(7.6, 8.5, 2),
        ],
        end=EndEvent(9.0, "agent_end_call"),
    )
    score = turn_taking_score(timeline)
    turns = score.details["turns"]
    assert turns[0]["condition"] == "user_interrupted"
    assert turns[0]["score"] == pytest.approx(0.75)  # 1 - 500 / 2000
    assert turns[1]["score"] == pytest.approx(1.0)  # 600 ms
    assert score.value == pytest.approx(0.875)


def test_both_interruptions_average_the_two_scores() -> None:
    timeline = Timeline(
        segments=[
            user(0.0, 2.0, 0),
            agent(1.5, 5.0, 1),  # overlaps the user by 500 ms and is still talking at 2.0
            user(4.0, 4.5, 1),  # the user cuts in; the agent goes on for 1000 ms
            agent(5.1, 6.0, 2),
        ],
        end=EndEvent(7.0, "agent_end_call"),
    )
    turn = turn_taking_score(timeline).details["turns"][0]
    assert turn["condition"] == "both"
    agent_part = 0.5 * ((1 - 500 / 2000) + (1 - 1 / 3)) / 2
    assert turn["score"] == pytest.approx((agent_part + 0.5) / 2)


def test_timeout_zeroes_the_conversation() -> None:
    timeline = Timeline(
        segments=[
            user(0.0, 2.0, 0),  # never answered
            user(8.0, 8.6, 1, "hello? are you there?"),
            agent(9.2, 10.0, 1),
        ],
        end=EndEvent(11.0, "user_end_call"),
    )
    score = turn_taking_score(timeline)
    assert score.value == 0.0
    assert score.passed is False
    assert score.details["timeouts"] == [0]
    assert score.details["conversation_completed"] is False


def test_unanswered_last_turn_counts_as_timeout_when_the_agent_timed_out() -> None:
    timeline = Timeline(
        segments=[user(0.0, 2.0, 0), agent(2.6, 3.0, 1), user(3.5, 4.0, 1)],
        end=EndEvent(12.0, "agent_timeout"),
    )
    assert turn_taking_score(timeline).value == 0.0


def test_greeting_interrupted_by_user_is_scored_on_yield() -> None:
    timeline = Timeline(
        segments=[agent(0.0, 3.0, 0, interrupted=True), user(2.0, 3.5, 0), agent(4.0, 5.0, 1)],
        end=EndEvent(6.0, "agent_end_call"),
    )
    score = turn_taking_score(timeline)
    assert score.details["greeting_yield_score"] == pytest.approx(0.5)  # kept on for 1000 ms
    assert score.value == pytest.approx((0.5 + 1.0) / 2)


def test_metric_entry_point_and_events_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    one_exchange(0.8).write_jsonl(events)
    metric = lookup("metric", "turn_taking")
    assert metric is turn_taking
    score = metric(LiveCallRecord(timeline=Timeline.read_jsonl(events)))
    assert score.value == pytest.approx(1.0)
    missing = turn_taking(LiveCallRecord())
    assert missing.value is None and missing.error


@pytest.mark.parametrize(("reason", "expected"), [("agent_error", 0.0), ("max_duration", 1.0)])
def test_last_turn_left_unanswered_by_a_failing_agent_scores_zero(
    reason: str, expected: float
) -> None:
    """The agent failed (raised or disconnected) right after the last user turn: that turn
    is a timeout, not a turn exempt because the call ended soon after it."""
    timeline = Timeline(
        segments=[agent(0.0, 0.8, 0), user(1.0, 3.0, 0), agent(4.0, 6.0, 1), user(6.6, 8.0, 1)],
        end=EndEvent(t=8.7, reason=reason),
    )
    score = turn_taking_score(timeline)
    assert score.value == expected
    assert score.details["timeouts"] == ([1] if expected == 0.0 else [])
