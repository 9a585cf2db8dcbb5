"""Golden timelines with hand-computed turn-taking scores (EVA-Bench reference rules).

Every timeline opens with the agent's greeting (turn 0, never scored), so the caller's first
speech is turn 1. The arithmetic behind each expected value is in the comment next to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxeval.registry import lookup
from voxeval.scoring.calls.call_turns import number_turns
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import (
    count_score,
    latency_score,
    overlap_score,
    timing_bucket,
    turn_taking,
    turn_taking_score,
    yield_score,
)
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent


def user(start: float, end: float, turn: int = 0, text: str = "hello") -> SpeakerSegment:
    return SpeakerSegment("user", start, end, turn, intended_text=text, transcript=text)


def agent(start: float, end: float, turn: int = 0, interrupted: bool = False) -> SpeakerSegment:
    return SpeakerSegment(
        "assistant", start, end, turn, intended_text="ok", interrupted=interrupted
    )


GREETING = agent(0.0, 1.0)


def tool(t: float, turn: int = 0) -> ToolEvent:
    return ToolEvent(t=t, turn=turn, name="lookup", arguments={}, result={}, kind="read")


def call(
    *segments: SpeakerSegment,
    tools: list[ToolEvent] | None = None,
    end: str = "agent_end_call",
    end_t: float = 30.0,
) -> Timeline:
    return Timeline(segments=list(segments), tools=tools or [], end=EndEvent(end_t, end))


def one_exchange(latency_s: float, tools: list[ToolEvent] | None = None) -> Timeline:
    """Greeting, caller turn 1 at 1.5-3.0 s, the agent answering ``latency_s`` after it."""
    return call(GREETING, user(1.5, 3.0), agent(3.0 + latency_s, 5.0 + latency_s), tools=tools)


def turn_of(timeline: Timeline, turn: int) -> dict[str, object]:
    turns = turn_taking_score(timeline).details["turns"]
    return next(t for t in turns if t["turn"] == turn)


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


def test_sub_score_curves() -> None:
    assert yield_score(0) == 1.0
    assert yield_score(500) == pytest.approx(0.75)  # 1 - 500 / 2000
    assert yield_score(2500) == 0.0
    assert overlap_score(0) == 0.5  # capped: interrupting is never free
    assert overlap_score(500) == pytest.approx(0.375)  # 0.5 * (1 - 500 / 2000)
    assert overlap_score(3000) == 0.0  # 0.5 * (1 - 1.5) < 0, clamped
    assert count_score(1) == 0.5  # 0.5 * (1 - 0 / 2)
    assert count_score(2) == pytest.approx(0.25)  # 0.5 * (1 - 1 / 2)
    assert count_score(3) == 0.0  # 0.5 * (1 - 2 / 2)
    assert count_score(5) == 0.0  # 0.5 * (1 - 4 / 2) = -0.5, clamped at 0
    assert timing_bucket(199, False) == "early"
    assert timing_bucket(200, False) == "on_time"
    assert timing_bucket(2750, False) == "late"
    assert timing_bucket(3999, True) == "on_time"
    assert timing_bucket(4000, True) == "late"


def test_latency_turns_and_the_unanswered_goodbye() -> None:
    timeline = call(
        GREETING,
        user(2.0, 4.0),
        agent(4.8, 7.0),  # turn 1: 800 ms -> 1.0
        user(7.5, 9.0),
        agent(9.6, 10.5),  # turn 2: 600 ms -> 1.0
        user(10.8, 11.0),  # turn 3: "bye", then the caller hangs up: not scored
        end="user_end_call",
        end_t=11.2,
    )
    score = turn_taking_score(timeline)
    assert score.value == pytest.approx(1.0)  # mean(1.0, 1.0)
    assert score.passed is True
    turns = score.details["turns"]
    assert [(t["turn"], t["reason"]) for t in turns] == [(1, "latency"), (2, "latency")]
    assert turns[0]["latency_ms"] == pytest.approx(800)
    assert score.details["num_turns"] == 3 and score.details["num_evaluated"] == 2
    assert score.details["bucket_counts"] == {"early": 0, "on_time": 2, "late": 0}


def test_early_late_and_tool_call_turns() -> None:
    assert turn_taking_score(one_exchange(0.1)).value == pytest.approx(0.6)  # (100+500)/1000
    late = turn_taking_score(one_exchange(2.75))  # (3500 - 2750) / 1500
    assert late.value == pytest.approx(0.5) and late.details["bucket_counts"]["late"] == 1
    with_tool = turn_taking_score(one_exchange(4.0, [tool(3.5)]))  # (5000 - 4000) / 2000
    assert with_tool.value == pytest.approx(0.5)
    assert with_tool.details["turns"][0]["tool_call"] is True
    assert turn_taking_score(one_exchange(4.0)).value == 0.0  # 4000 >= 3500 without a tool


# --- the agent interrupts the caller: min(overlap, count, recovery), each of the first two
# capped at 0.5


def test_agent_interrupt_is_the_minimum_of_the_sub_scores() -> None:
    timeline = call(
        GREETING,
        user(1.5, 5.5),
        agent(4.5, 5.0),  # barges in: 500 ms of overlap, one barge-in
        agent(6.1, 7.5),  # settled reply 600 ms after the caller stopped
    )
    turn = turn_of(timeline, 1)
    assert turn["reason"] == "agent_interrupt"
    evidence = turn["evidence"]
    assert evidence["overlap_score"] == pytest.approx(0.375)  # 0.5 * (1 - 500 / 2000)
    assert evidence["count_score"] == 0.5  # n = 1: 0.5 * (1 - 0 / 2)
    assert evidence["recovery_score"] == 1.0  # 600 ms on the latency curve
    # min(0.375, 0.5, 1.0); the old mean-based rule gave 0.5 * mean(0.75, 2/3, 1) = 0.4028
    assert turn["score"] == pytest.approx(0.375)
    assert turn_taking_score(timeline).value == pytest.approx(0.375)


@pytest.mark.parametrize(
    ("barge_ins", "expected"),
    [
        # overlap 2 x 100 ms -> 0.5 * (1 - 200/2000) = 0.45; count 0.5 * (1 - 1/2) = 0.25;
        # recovery 500 ms -> 1.0; min = 0.25
        (2, 0.25),
        # overlap 300 ms -> 0.425; count 0.5 * (1 - 2/2) = 0; min = 0.0
        (3, 0.0),
        # overlap 400 ms -> 0.4; count 0.5 * (1 - 3/2) = -0.25, clamped at 0; min = 0.0
        (4, 0.0),
    ],
)
def test_barge_in_count_sub_score(barge_ins: int, expected: float) -> None:
    barges = [agent(2.0 + 1.5 * k, 2.1 + 1.5 * k) for k in range(barge_ins)]  # 100 ms each
    timeline = call(GREETING, user(1.5, 8.5), *barges, agent(9.0, 10.0))
    turn = turn_of(timeline, 1)
    assert turn["evidence"]["barge_ins"] == barge_ins
    assert turn["evidence"]["overlap_ms"] == pytest.approx(100 * barge_ins)
    assert turn["score"] == pytest.approx(expected)


def test_brief_barge_in_then_a_long_wait_is_scored_by_recovery() -> None:
    timeline = call(GREETING, user(1.5, 4.0), agent(3.9, 4.0), agent(7.0, 8.0))
    turn = turn_of(timeline, 1)
    # overlap 100 ms -> 0.45; count 1 -> 0.5; recovery 7.0 - 4.0 = 3000 ms ->
    # (3500 - 3000) / 1500 = 0.3333; min = 0.3333 (old rule: 0.5 * mean(.95, .667, .333))
    assert turn["score"] == pytest.approx(0.3333, abs=1e-4)


def test_recovery_is_left_out_while_the_agent_talks_through_the_callers_end() -> None:
    timeline = call(GREETING, user(1.5, 4.0), agent(3.0, 5.0))
    turn = turn_of(timeline, 1)
    assert "recovery_score" not in turn["evidence"]
    # overlap 1000 ms -> 0.5 * (1 - 0.5) = 0.25; count 0.5; min = 0.25 (old: 0.29167)
    assert turn["score"] == pytest.approx(0.25)


# --- the caller interrupts the agent: the yield score replaces the latency of the caller's
# NEXT turn (the one it barged in with); the interrupted reply keeps its own latency score


def test_user_interrupt_scores_the_next_turn_and_keeps_the_late_start() -> None:
    timeline = call(
        GREETING,
        user(1.5, 3.0),
        agent(5.75, 8.5),  # turn 1: a late start, 2750 ms -> (3500 - 2750) / 1500 = 0.5
        user(8.0, 9.5),  # the caller cuts in at 8.0; the agent stops at 8.5: 500 ms yield
        agent(10.1, 11.0),  # turn 2: 600 ms latency, replaced by the yield 1 - 500/2000 = 0.75
    )
    score = turn_taking_score(timeline)
    turns = {t["turn"]: t for t in score.details["turns"]}
    assert turns[1]["reason"] == "latency" and turns[1]["score"] == pytest.approx(0.5)
    assert turns[2]["reason"] == "user_interrupt" and turns[2]["score"] == pytest.approx(0.75)
    assert turns[2]["evidence"]["yield_ms"] == pytest.approx(500)
    # mean(0.5, 0.75) = 0.625; the old rule scored the late reply by its yield: (0.75 + 1) / 2
    assert score.value == pytest.approx(0.625)


# --- both interrupt in one turn: the minimum of the two scores


def test_both_interruptions_take_the_minimum() -> None:
    timeline = call(
        GREETING,
        user(1.5, 3.0),
        agent(3.6, 6.0),  # turn 1: 600 ms -> 1.0
        user(5.5, 8.0),  # turn 2 opens over the agent: yield 6.0 - 5.5 = 500 ms -> 0.75
        agent(7.5, 7.9),  # ... and the agent barges into it: 400 ms overlap
        agent(8.6, 9.5),  # settled 600 ms after the caller stopped
    )
    turn = turn_of(timeline, 2)
    assert turn["reason"] == "dual_interrupt"
    # agent part: min(0.5 * (1 - 400/2000) = 0.4, count 0.5, recovery 1.0) = 0.4
    # both: min(0.4, 0.75) = 0.4 (the old rule averaged: (0.4 + 0.75) / 2)
    assert turn["score"] == pytest.approx(0.4)
    assert turn_taking_score(timeline).value == pytest.approx(0.7)  # mean(1.0, 0.4)


# --- the greeting is turn 0: never scored itself; a caller barging into it is scored as the
# yield of turn 1


def test_greeting_interrupted_by_the_caller_is_turn_one_yield() -> None:
    timeline = call(agent(0.0, 3.0, interrupted=True), user(2.0, 3.5), agent(4.0, 5.0))
    score = turn_taking_score(timeline)
    turn = score.details["turns"][0]
    assert (turn["turn"], turn["reason"]) == (1, "user_interrupt")
    # yield 3.0 - 2.0 = 1000 ms -> 0.5 replaces turn 1's latency (500 ms -> 1.0); no extra
    # greeting score (the old rule averaged a greeting yield in: (0.5 + 1.0) / 2)
    assert score.value == pytest.approx(0.5)


def test_without_a_greeting_the_first_exchange_is_turn_zero_and_not_scored() -> None:
    timeline = call(user(0.0, 2.0), agent(2.6, 3.5), user(4.0, 5.0), agent(7.75, 8.5))
    score = turn_taking_score(timeline)
    # turn 0 (600 ms) is left out; turn 1: 2750 ms -> 0.5
    assert [t["turn"] for t in score.details["turns"]] == [1]
    assert score.value == pytest.approx(0.5)  # the old rule: mean(1.0, 0.5) = 0.75


# --- caller speech the agent never answered joins the caller's next speech


def test_unanswered_speech_merges_into_the_next_turn() -> None:
    timeline = call(
        GREETING,
        user(1.5, 3.0),  # never answered ...
        user(8.0, 8.6, 1, "hello? are you there?"),  # ... so this is still turn 1
        agent(9.2, 10.0),  # 9.2 - 8.6 = 600 ms -> 1.0
        end="user_end_call",
    )
    turns = number_turns(timeline)
    assert turns.user[1] == [(1.5, 3.0), (8.0, 8.6)]
    score = turn_taking_score(timeline)
    assert score.value == pytest.approx(1.0)  # the old rule zeroed the whole call
    assert score.details["timeouts"] == [] and score.details["missed_turn"] is False


# --- the zero rule is kept only where the reference keeps it: the call ended because the
# agent left the caller's last words unanswered


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("agent_timeout", 0.0),  # the reference's inactivity timeout with the caller last
        ("agent_error", 1.0),  # not zeroed by default, as in the reference (issue 37.4b)
        ("max_duration", 1.0),  # not the agent's silence: turn 1 = 600 ms -> 1.0
        ("user_end_call", 1.0),
    ],
)
def test_missed_last_turn_zeroes_the_call(reason: str, expected: float) -> None:
    timeline = call(
        GREETING, user(1.5, 3.0), agent(3.6, 4.0), user(4.5, 5.0), end=reason, end_t=20.0
    )
    score = turn_taking_score(timeline)
    assert score.value == expected
    assert score.details["missed_turn"] is (expected == 0.0)
    assert score.details["timeouts"] == ([2] if expected == 0.0 else [])


def test_agent_error_zeroes_the_call_only_when_opted_in() -> None:
    timeline = call(
        GREETING, user(1.5, 3.0), agent(3.6, 4.0), user(4.5, 5.0), end="agent_error", end_t=20.0
    )
    assert turn_taking_score(timeline, zero_on_agent_error=True).value == 0.0
    metric = lookup("metric", "turn_taking")
    assert metric(LiveCallRecord(timeline=timeline)).value == 1.0
    opted = LiveCallRecord(timeline=timeline, turn_taking_zero_on_agent_error=True)
    assert metric(opted).value == 0.0


def test_agent_starting_over_the_caller_opens_its_turn_only_with_its_transcript() -> None:
    # issue 37.4a: the agent starts at 4.5 s while the caller talks (to 5.5 s) and the caller
    # resumes at 5.8 s, before that reply's transcript (its end, 6.0 s) arrives: one turn.
    timeline = call(GREETING, user(1.5, 5.5), agent(4.5, 6.0), user(5.8, 7.0), agent(7.6, 8.5))
    turns = number_turns(timeline)
    assert turns.user == {1: [(1.5, 5.5), (5.8, 7.0)]}
    assert turns.agent == {0: [(0.0, 1.0)], 1: [(4.5, 6.0), (7.6, 8.5)]}
    score = turn_taking_score(timeline)
    # overlap (5.5-4.5) + (6.0-5.8) = 1.2 s -> 0.5 * (1 - 1200/2000) = 0.2; one barge-in ->
    # 0.5; settled reply 7.6 - 7.0 = 600 ms -> 1.0; the caller's cut-in at 5.8 s yields to the
    # greeting (ended 1.0 s, before 1.5 s) -> 1.0; min = 0.2 (today: 0.575 over two turns)
    assert score.value == pytest.approx(0.2)
    assert score.details["num_evaluated"] == 1
    assert turn_of(timeline, 1)["reason"] == "dual_interrupt"


def test_agent_reply_over_the_caller_still_ends_the_turn_once_heard() -> None:
    # the caller speaks again only after the overlapping reply ended: a new turn, as before
    timeline = call(GREETING, user(1.5, 5.5), agent(4.5, 6.0), user(6.5, 7.0), agent(7.6, 8.5))
    assert number_turns(timeline).user == {1: [(1.5, 5.5)], 2: [(6.5, 7.0)]}


def test_caller_spoke_but_no_turn_was_answered_scores_zero() -> None:
    score = turn_taking_score(call(GREETING, user(1.5, 3.0), end="user_end_call"))
    assert score.value == 0.0 and score.passed is False
    assert score.details["num_evaluated"] == 0 and "both" in score.details["reason"]


def test_metric_entry_point_and_events_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    one_exchange(0.8).write_jsonl(events)
    metric = lookup("metric", "turn_taking")
    assert metric is turn_taking
    score = metric(LiveCallRecord(timeline=Timeline.read_jsonl(events)))
    assert score.value == pytest.approx(1.0)
    missing = turn_taking(LiveCallRecord())
    assert missing.value is None and missing.error
    no_user = turn_taking(LiveCallRecord(timeline=call(GREETING)))
    assert no_user.value is None and no_user.error


def mm_hm(start: float, end: float, speaker: str = "user", turn: int = 1) -> SpeakerSegment:
    """A backchannel; the listener's segment carries its own current turn number."""
    return SpeakerSegment(
        speaker,  # type: ignore[arg-type]
        start,
        end,
        turn,
        intended_text="mm-hm",
        transcript="mm-hm",
        backchannel=True,
    )


def test_a_caller_backchannel_is_neither_a_turn_nor_an_interruption() -> None:
    """Golden: greeting; caller 1.5-3.0; agent 3.6-8.0 with the caller's "mm-hm" at 5.0-5.4;
    caller 8.6-9.5; agent 10.1-11.0. Turn 1: 600 ms -> 1; turn 2: 600 ms -> 1 -> call 1.
    (Counted as speech, the "mm-hm" would open turn 2 as a caller interrupt with a 3000 ms
    yield -> 0, and the call would score 0.5.)"""
    timeline = call(
        GREETING, user(1.5, 3.0, 1), agent(3.6, 8.0, 1), mm_hm(5.0, 5.4),
        user(8.6, 9.5, 2), agent(10.1, 11.0, 2),
    )  # fmt: skip
    turns = number_turns(timeline)
    assert turns.user == {1: [(1.5, 3.0)], 2: [(8.6, 9.5)]}
    assert turns.user_interrupted == set()
    score = turn_taking_score(timeline)
    assert score.value == 1.0
    assert score.details["num_evaluated"] == 2
    assert score.details["user_interruption_rate"] == 0.0


def test_a_caller_pause_stays_inside_its_turn_when_the_agent_only_backchannels() -> None:
    """Golden: caller 1.5-3.0 and 4.2-5.5 (one turn, a 1.2 s pause); the agent says "mm-hm"
    at 3.5-3.8 and answers at 6.0 -> one turn, latency 6.0 - 5.5 = 500 ms -> 1."""
    timeline = call(
        GREETING, user(1.5, 3.0, 1), mm_hm(3.5, 3.8, "assistant", 0), user(4.2, 5.5, 1),
        agent(6.0, 7.0, 1),
    )  # fmt: skip
    turns = number_turns(timeline)
    assert turns.user == {1: [(1.5, 3.0), (4.2, 5.5)]}
    assert turns.agent == {0: [(0.0, 1.0)], 1: [(6.0, 7.0)]}
    assert turns.agent_interrupted == set()
    score = turn_taking_score(timeline)
    assert score.value == 1.0 and score.details["turns"][0]["latency_ms"] == pytest.approx(500.0)


def test_a_closing_backchannel_does_not_make_the_caller_the_last_speaker() -> None:
    """Golden: greeting; caller 1.5-3.0; agent 3.6-6.0 with the caller's "mm-hm" at 5.8-6.2;
    the call ends by agent timeout. The agent spoke last (the "mm-hm" is no turn to answer),
    so the call is not zeroed: turn 1 at 600 ms -> 1."""
    timeline = call(
        GREETING, user(1.5, 3.0, 1), agent(3.6, 6.0, 1), mm_hm(5.8, 6.2), end="agent_timeout"
    )
    score = turn_taking_score(timeline)
    assert score.details["missed_turn"] is False
    assert score.value == 1.0


def test_backchannels_alone_are_not_caller_speech() -> None:
    timeline = call(GREETING, mm_hm(0.5, 0.8))
    score = turn_taking(LiveCallRecord(timeline=timeline))
    assert score.value is None and "backchannels aside" in str(score.error)


def test_the_opt_in_is_a_run_config_scoring_option() -> None:
    from voxeval.protocols.live_call_scoring import LiveCallScoring

    assert LiveCallScoring().turn_taking_zero_on_agent_error is False
    opted = LiveCallScoring.model_validate({"turn_taking_zero_on_agent_error": True})
    assert opted.turn_taking_zero_on_agent_error is True
