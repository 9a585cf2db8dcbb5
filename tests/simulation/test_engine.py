"""Golden timelines: every expected time below is computed by hand from the timing model
(words 0.4 s, agent latency 0.8 s, caller gap 0.6 s; the adapted agent's end-of-turn silence
0.7 s and barge-in threshold 0.3 s; 20 ms frames)."""

import numpy as np
import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel

FIXED = LatencyModel(agent=ComponentLatency(kind="fixed", ms=800))


def spans(result, speaker):  # type: ignore[no-untyped-def]
    return [
        (round(s.start, 2), round(s.end, 2), s.interrupted) for s in result.timeline.speech(speaker)
    ]


def call(caller, agent, mode="text", **kw):  # type: ignore[no-untyped-def]
    if mode == "audio":
        kw.update(caller_voice=tone_voice, agent_voice=tone_voice)
    return run_call(None, caller, agent, NoTools(), mode=mode, latency_model=FIXED, **kw)


@pytest.mark.parametrize("mode", ["text", "audio"])
def test_on_time_exchange(mode: str) -> None:
    result = call(ListCaller("i need help", []), ListAgent(["a b c d e"]), mode)
    assert spans(result, "assistant") == [(0.8, 1.6, False), (4.9, 6.9, False)]
    assert spans(result, "user") == [(2.2, 3.4, False), (7.5, 7.9, False)]
    assert result.timeline.end is not None
    assert (result.timeline.end.reason, result.timeline.end.t) == ("user_end_call", 7.9)
    score = turn_taking(LiveCallRecord(timeline=result.timeline))
    assert score.details["turns"][0]["latency_ms"] == pytest.approx(1500)
    assert score.value == 1.0


@pytest.mark.parametrize("mode", ["text", "audio"])
def test_pause_inside_user_turn_makes_the_agent_interrupt(mode: str) -> None:
    agent = ListAgent(["a b c d e", "f g"])
    result = call(ListCaller("one two three ... four five", []), agent, mode)
    # user: [2.2, 3.4] pause [4.4, 5.2]; early end of turn at 4.1, agent starts at 4.9 while
    # the user is talking again, hears it and stops 0.3 s later.
    assert spans(result, "user")[:2] == [(2.2, 3.4, False), (4.4, 5.2, False)]
    # the agent stopped because it had talked over the user: cut short, and recorded as cut
    # (with the caller's speech on the line as the reason)
    assert spans(result, "assistant") == [(0.8, 1.6, False), (4.9, 5.2, True), (6.7, 7.5, False)]
    assert result.timeline.speech("assistant")[1].cut_reason == "caller_speech"
    if mode == "text":
        assert agent.heard == ["one two three", "four five"]
    score = turn_taking(LiveCallRecord(timeline=result.timeline))
    first = score.details["turns"][0]  # turn 1 (the greeting is turn 0)
    assert (first["turn"], first["reason"]) == (1, "agent_interrupt")
    assert first["evidence"]["overlap_ms"] == pytest.approx(300)


@pytest.mark.parametrize("mode", ["text", "audio"])
def test_caller_barge_in_makes_the_agent_yield_and_truncates(mode: str) -> None:
    caller = ListCaller("i need help", ["stop please"], barge_in_after_s=1.0)
    result = call(caller, ListAgent(["a b c d e f g h", "ok"]), mode)
    assert spans(result, "assistant") == [(0.8, 1.6, False), (4.9, 6.2, True), (8.2, 8.6, False)]
    assert spans(result, "user") == [(2.2, 3.4, False), (5.9, 6.7, False), (9.2, 9.6, False)]
    if mode == "text":
        assert caller.heard[0] == "a b"  # it cut in after 1 s of an 3.2 s line
    else:
        track = result.assistant_track
        assert track is not None
        energy = np.abs(track.slice(6.25, 8.15).samples).max()
        assert energy == 0.0  # the rest of the interrupted line was never played
    score = turn_taking(LiveCallRecord(timeline=result.timeline))
    # the caller's barge-in opens turn 2, which is scored by the agent's yield
    barged = score.details["turns"][1]
    assert (barged["turn"], barged["reason"]) == (2, "user_interrupt")
    assert barged["evidence"]["yield_ms"] == pytest.approx(300)


def test_agent_that_never_answers_times_out() -> None:
    result = call(ListCaller("i need help", []), ListAgent(["x"], silent_at=0), agent_timeout_s=5)
    assert result.timeline.end is not None
    # the timeout counts from the end of the caller's turn (3.4), not from a detected end of
    # turn: an agent that keeps listening is never timed out inside the caller's turn
    assert (result.end_reason, result.timeline.end.t) == ("agent_timeout", 8.4)
    assert turn_taking(LiveCallRecord(timeline=result.timeline)).value == 0.0


def test_tool_calls_are_timed_and_add_configured_latency() -> None:
    latency = LatencyModel(
        agent=ComponentLatency(kind="fixed", ms=800), tool=ComponentLatency(kind="fixed", ms=500)
    )
    agent = ListAgent(["a b"], tools={0: 2})
    result = run_call(
        None, ListCaller("i need help", []), agent, NoTools(), mode="text", latency_model=latency
    )
    assert spans(result, "assistant")[1] == (5.9, 6.7, False)  # 4.1 + 0.8 + 2 x 0.5
    # tool calls are spread over the agent's 1.8 s of work after the end of turn at 4.1
    assert [(t.t, t.turn) for t in result.timeline.tools] == [(4.7, 1), (5.3, 1)]


def test_agent_end_call_and_max_duration() -> None:
    agent = ListAgent([])  # hangs up on the first turn
    result = call(ListCaller("hi", []), agent)
    assert result.end_reason == "agent_end_call"
    chatty = ListCaller("hi", ["more words"] * 100)
    result = call(chatty, ListAgent(["ok"] * 100), max_duration_s=30)
    assert result.end_reason == "max_duration"
    assert result.timeline.end is not None and result.timeline.end.t == 30


def test_virtual_clock_runs_much_faster_than_real_time() -> None:
    caller = ListCaller("hello " * 20, ["word " * 30] * 20)
    result = call(caller, ListAgent(["reply " * 30] * 25))
    assert result.duration_s > 300
    assert result.wall_s < result.duration_s / 100


def test_measured_latency_is_used_without_a_model() -> None:
    result = run_call(None, ListCaller("hi", []), ListAgent(["a"]), NoTools(), mode="text")
    first = result.timeline.speech("assistant")[0]
    assert 0.0 <= first.start < 0.1  # an instant agent speaks at once


def test_wall_clock_mode_keeps_the_timeline_and_takes_real_time() -> None:
    virtual = call(ListCaller("hi", []), ListAgent(["ok"], greeting=None))
    wall = call(ListCaller("hi", []), ListAgent(["ok"], greeting=None), clock="wall")
    assert spans(wall, "assistant") == spans(virtual, "assistant")
    assert spans(wall, "user") == spans(virtual, "user")
    assert wall.wall_s >= wall.timeline.speech("assistant")[0].start - 0.05
