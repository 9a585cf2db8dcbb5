"""Golden timelines for the full-duplex metrics (docs/turn-taking.md section 9): each expected
value is worked out by hand in the comment beside it. Every call opens with the agent's
greeting at 0.0-1.0 s and the caller's first turn at 1.5-3.0 s."""

from __future__ import annotations

import pytest

from voxeval.protocols.live_call import DIAGNOSTICS, default_metrics
from voxeval.registry import lookup
from voxeval.scoring.calls.duplex_metrics import (
    BARGE_IN_HANDLED_MS,
    backchannel_rate,
    backchannel_yield_rate,
    barge_in_handling_rate,
    false_end_of_turn_rate,
    talk_over_ratio,
    yield_latency,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import failure_score, partial_call_score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline

DUPLEX = (
    "yield_latency",
    "barge_in_handling_rate",
    "backchannel_rate",
    "backchannel_yield_rate",
    "false_end_of_turn_rate",
    "talk_over_ratio",
)


def user(start: float, end: float, turn: int, backchannel: bool = False) -> SpeakerSegment:
    text = "mm-hm" if backchannel else "I need to move my appointment"
    return SpeakerSegment("user", start, end, turn, text, text, backchannel=backchannel)


def agent(start: float, end: float, turn: int, interrupted: bool = False) -> SpeakerSegment:
    return SpeakerSegment("assistant", start, end, turn, "Sure.", interrupted=interrupted)


def record(*segments: SpeakerSegment, end_t: float = 30.0) -> LiveCallRecord:
    return LiveCallRecord(
        timeline=Timeline(segments=list(segments), end=EndEvent(end_t, "user_end_call"))
    )


GREETING = agent(0.0, 1.0, 0)
FIRST = user(1.5, 3.0, 0)


def barged_in(agent_stops_at: float, yielded: bool = True) -> LiveCallRecord:
    """The agent's reply plays from 3.5 s (it meant to talk until 8.0 s); the caller barges in
    at 5.0 s and talks until 6.5 s; the agent's audio stops at ``agent_stops_at``."""
    reply = agent(3.5, agent_stops_at, 1, interrupted=yielded)
    return record(GREETING, FIRST, reply, user(5.0, 6.5, 1), agent(7.0, 8.0, 2))


# --- yield latency and barge-in handling -------------------------------------------------


def test_an_agent_yielding_after_150_ms_beats_one_yielding_after_1500_ms() -> None:
    fast = yield_latency(barged_in(5.15))  # 5.15 - 5.0 = 150 ms
    slow = yield_latency(barged_in(6.5))  # 6.5 - 5.0 = 1500 ms
    assert fast.value == pytest.approx(150.0)
    assert slow.value == pytest.approx(1500.0)
    assert metric_direction("yield_latency") == "lower"
    assert fast.value < slow.value  # lower is better: the fast yield scores better
    assert fast.details["count"] == 1 and fast.details["ignored"] == 0
    assert barge_in_handling_rate(barged_in(5.15)).value == 1.0  # 150 <= 1000 ms
    assert barge_in_handling_rate(barged_in(6.5)).value == 0.0  # 1500 > 1000 ms


def test_an_agent_that_ignores_a_barge_in_keeps_talking_and_is_scored_so() -> None:
    ignoring = barged_in(8.0, yielded=False)  # talks to its natural end, 3000 ms after
    latency = yield_latency(ignoring)
    assert latency.value is None  # no yield to time: never averaged in as a latency
    assert latency.error == "the agent yielded to none of 1 barge-ins"
    assert latency.details["ignored"] == 1
    assert latency.details["ignored_run_on_ms"] == [pytest.approx(3000.0)]
    handling = barge_in_handling_rate(ignoring)
    assert handling.value == 0.0  # counted as not handled
    assert handling.details["per_barge_in"][0]["yielded"] is False


def test_yield_latency_takes_the_median_and_reports_mean_and_ignored_apart() -> None:
    # three barge-ins: yielded after 200 ms and 600 ms, one ignored (run-on 2000 ms)
    rec = record(
        GREETING, FIRST,
        agent(3.5, 5.2, 1, interrupted=True), user(5.0, 6.0, 1),  # 200 ms
        agent(6.5, 9.6, 2, interrupted=True), user(9.0, 10.0, 2),  # 600 ms
        agent(10.5, 14.0, 3), user(12.0, 12.5, 3),  # ignored: ran on 2000 ms
        agent(13.0, 13.5, 3),
    )  # fmt: skip
    score = yield_latency(rec)
    assert score.value == pytest.approx(400.0)  # median(200, 600)
    assert score.details["mean_ms"] == pytest.approx(400.0)
    assert score.details["count"] == 2 and score.details["barge_ins"] == 3
    assert score.details["ignored_run_on_ms"] == [pytest.approx(2000.0)]
    # handled: 200 and 600 ms within 1000 ms, the ignored one not -> 2/3
    assert barge_in_handling_rate(rec).value == pytest.approx(2 / 3)


def test_the_handling_threshold_is_inclusive_at_one_second() -> None:
    assert BARGE_IN_HANDLED_MS == 1000.0
    assert barge_in_handling_rate(barged_in(6.0)).value == 1.0  # exactly 1000 ms
    assert barge_in_handling_rate(barged_in(6.0 + 1 / 64)).value == 0.0


def test_a_barge_in_the_call_end_cut_short_is_unresolved() -> None:
    # the caller talks over the agent at 5.0 and hangs up at 5.5: the agent had 500 ms
    rec = record(GREETING, FIRST, agent(3.5, 5.5, 1), user(5.0, 5.5, 1), end_t=5.5)
    handling = barge_in_handling_rate(rec)
    assert handling.value is None and handling.details["unresolved"] == 1
    latency = yield_latency(rec)
    assert latency.value is None and latency.details["unresolved"] == 1
    assert latency.error == "every barge-in was cut short by the end of the call"
    # cut only after 2 s of ignoring the caller: that is not handled whatever came next
    late = record(GREETING, FIRST, agent(3.5, 7.0, 1), user(5.0, 7.0, 1), end_t=7.0)
    assert barge_in_handling_rate(late).value == 0.0


def test_without_a_barge_in_the_barge_in_metrics_are_not_run() -> None:
    polite = record(GREETING, FIRST, agent(3.6, 5.0, 1), user(5.6, 6.0, 1))
    for metric in (yield_latency, barge_in_handling_rate):
        score = metric(polite)
        assert score.value is None
        assert score.error == "the caller never barged in while the agent spoke"


def test_a_caller_starting_with_the_agent_is_not_barging_in() -> None:
    same_instant = record(GREETING, FIRST, agent(3.5, 5.0, 1), user(3.5, 4.0, 1))
    assert yield_latency(same_instant).value is None


# --- backchannels --------------------------------------------------------------------------


def test_backchannel_rate_counts_per_minute_of_agent_speech() -> None:
    # agent floor speech: greeting 1 s + reply 6 s = 7 s; two "mm-hm"s -> 2 / (7/60) per minute
    rec = record(
        GREETING, FIRST, agent(3.5, 9.5, 1), user(5.0, 5.4, 0, True), user(7.0, 7.3, 0, True),
        user(10.0, 11.0, 1),
    )  # fmt: skip
    score = backchannel_rate(rec)
    assert score.value == pytest.approx(2 * 60 / 7)
    assert score.details["over_agent_speech"] == 2
    assert metric_direction("backchannel_rate") is None  # describes the caller
    # the agent kept talking through both: it yielded to neither
    assert backchannel_yield_rate(rec).value == 0.0
    # a backchannel is not a barge-in
    assert yield_latency(rec).error == "the caller never barged in while the agent spoke"


def test_an_agent_that_stops_for_a_backchannel_wrongly_yielded() -> None:
    # the agent stops at 7.6 with no barge-in: it yielded to the "mm-hm" at 7.0 (the last one
    # before its stop), not to the one at 5.0 it talked through -> 1/2
    rec = record(
        GREETING, FIRST, agent(3.5, 7.6, 1, interrupted=True),
        user(5.0, 5.4, 0, True), user(7.0, 7.3, 0, True), user(9.0, 10.0, 1),
    )  # fmt: skip
    score = backchannel_yield_rate(rec)
    assert score.value == 0.5
    assert score.details["yielded_at"] == [7.0]
    assert metric_direction("backchannel_yield_rate") == "lower"


def test_a_stop_explained_by_a_barge_in_is_not_a_backchannel_yield() -> None:
    rec = record(
        GREETING, FIRST, agent(3.5, 6.2, 1, interrupted=True),
        user(5.0, 5.4, 0, True), user(6.0, 7.0, 1),  # mm-hm, then a real barge-in
    )  # fmt: skip
    assert backchannel_yield_rate(rec).value == 0.0
    assert yield_latency(rec).value == pytest.approx(200.0)


def test_backchannel_metrics_without_anything_to_measure_are_not_run() -> None:
    quiet_caller = record(GREETING, FIRST, agent(3.5, 5.0, 1))
    assert backchannel_rate(quiet_caller).value == 0.0  # agent speech measured, none said
    assert backchannel_yield_rate(quiet_caller).error == (
        "the caller never backchannelled while the agent spoke"
    )
    silent_agent = record(FIRST)
    assert backchannel_rate(silent_agent).error == "the agent never spoke"


# --- false end of turn ----------------------------------------------------------------------


def paused_call(*answer: SpeakerSegment) -> LiveCallRecord:
    """The caller's turn 0 has a 1.2 s pause: 1.5-3.0, silence, 4.2-5.5."""
    return record(GREETING, user(1.5, 3.0, 0), user(4.2, 5.5, 0), *answer)


def test_waiting_out_a_pause_is_not_a_false_end_of_turn_and_jumping_in_is() -> None:
    patient = false_end_of_turn_rate(paused_call(agent(6.0, 7.0, 1)))
    assert patient.value == 0.0
    assert patient.details["per_pause"] == [
        {
            "turn": 0,
            "start": 3.0,
            "length_ms": pytest.approx(1200.0),
            "agent_onset_ms": None,
            "onset_in_pause": False,
        }
    ]
    # the agent takes the pause for the end of the turn 700 ms in and talks until the caller
    # resumes over it; then answers again after the caller is done
    jumpy = false_end_of_turn_rate(
        paused_call(agent(3.7, 4.4, 1, interrupted=True), agent(6.0, 7.0, 2))
    )
    assert jumpy.value == 1.0
    assert jumpy.details["false_ends"] == 1
    assert jumpy.details["per_pause"][0]["agent_onset_ms"] == pytest.approx(700.0)
    assert jumpy.details["per_pause"][0]["onset_in_pause"] is True


def test_an_answer_to_the_pause_that_lands_after_the_caller_resumed_is_a_false_end() -> None:
    # the agent took the pause at 3.0 for the end of the turn, but its response time put its
    # onset at 4.6, after the caller resumed at 4.2 and before it finished at 5.5
    late = false_end_of_turn_rate(paused_call(agent(4.6, 5.0, 1), agent(6.0, 7.0, 2)))
    assert late.value == 1.0
    assert late.details["per_pause"][0]["agent_onset_ms"] == pytest.approx(1600.0)
    assert late.details["per_pause"][0]["onset_in_pause"] is False
    assert metric_direction("false_end_of_turn_rate") == "lower"


def test_an_agent_backchannel_in_a_pause_is_not_a_false_end_of_turn() -> None:
    mm_hm = SpeakerSegment("assistant", 3.5, 3.8, 0, "mm-hm", backchannel=True)
    assert false_end_of_turn_rate(paused_call(mm_hm, agent(6.0, 7.0, 1))).value == 0.0


def test_false_end_of_turn_rate_is_over_the_pauses_the_agent_was_silent_at() -> None:
    # turn 0: two pauses (3.0-3.5 waited out, 4.5-5.0 jumped into at 4.8);
    # turn 1: a pause 8.0-8.4 the agent was already talking through (left out)
    rec = record(
        GREETING, user(1.5, 3.0, 0), user(3.5, 4.5, 0), user(5.0, 6.0, 0),
        agent(4.8, 5.0, 1, interrupted=True), agent(6.5, 7.0, 1),
        user(7.5, 8.0, 1), agent(7.9, 8.6, 2), user(8.4, 9.0, 1),
    )  # fmt: skip
    score = false_end_of_turn_rate(rec)
    assert score.value == 0.5  # 1 of 2
    assert score.details["overlapped"] == 1 and score.details["pauses"] == 2


def test_without_a_pause_false_end_of_turn_rate_is_not_run() -> None:
    score = false_end_of_turn_rate(record(GREETING, FIRST, agent(3.6, 5.0, 1)))
    assert score.value is None and score.error == "the caller made no pause inside a turn"


# --- talk-over ------------------------------------------------------------------------------


def test_talk_over_ratio_is_both_over_anyone() -> None:
    # speech covers 0-1, 1.5-3.0, 3.5-6.5 and 7.0-8.0 = 6.5 s; both spoke 5.0-5.15 = 0.15 s
    score = talk_over_ratio(barged_in(5.15))
    assert score.value == pytest.approx(0.15 / 6.5)
    assert score.details["both_s"] == pytest.approx(0.15)
    assert score.details["anyone_s"] == pytest.approx(6.5)
    # the slow yield: both spoke 5.0-6.5 = 1.5 s of the same 6.5 s
    assert talk_over_ratio(barged_in(6.5)).value == pytest.approx(1.5 / 6.5)


def test_backchannels_are_not_talk_over() -> None:
    rec = record(GREETING, FIRST, agent(3.5, 9.5, 1), user(5.0, 5.4, 0, True))
    score = talk_over_ratio(rec)
    assert score.value == 0.0 and score.details["caller_backchannels"] == 1
    assert talk_over_ratio(record(user(1.0, 2.0, 0, True))).error == (
        "nobody spoke (backchannels aside)"
    )


# --- registration, defaults, system faults -----------------------------------------------


def test_the_duplex_metrics_are_registered_live_call_diagnostics() -> None:
    assert set(DUPLEX) <= set(DIAGNOSTICS)
    assert set(DUPLEX) <= set(default_metrics())
    for name in DUPLEX:
        assert lookup("metric", name) is not None
    assert metric_direction("barge_in_handling_rate") == "higher"
    assert metric_direction("talk_over_ratio") == "lower"


def test_without_a_timeline_every_duplex_metric_is_not_run() -> None:
    for name in DUPLEX:
        score = lookup("metric", name)(LiveCallRecord(), None)
        assert score.value is None and score.error == "no event timeline for this call"


@pytest.mark.parametrize("name", DUPLEX)
def test_a_failed_call_keeps_what_was_measured_else_is_not_run_with_the_fault(name: str) -> None:
    measured = partial_call_score(name, Score(0.25), "disconnect")
    assert measured.value == 0.25 and measured.details["system_fault"] == "disconnect"
    nothing = partial_call_score(name, Score.not_run("nothing to measure"), "disconnect")
    assert nothing.value is None and nothing.error == "system fault: disconnect"
    assert failure_score(name, "timeout").error == "system fault: timeout"
