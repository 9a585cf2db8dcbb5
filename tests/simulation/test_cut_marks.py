"""Every cut is recorded (issue 38, point 3): an agent utterance that stops early, for any
reason, is marked ``interrupted`` with the reason and what went out; a caller turn split at
pauses keeps its own text on each piece; yields fade out. Timing as in test_duplex.py (words
0.4 s, text mode 2.5 words/s, agent latency 800 ms, caller gap 0.6 s)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.simulation.parties import ListAgent, ListCaller
from tests.simulation.test_duplex import LONG_LINE, agent_with, call, caller_with
from voxeval.audio.mix import mix_tracks
from voxeval.simulation.caller_behaviour import ScheduledBehaviour
from voxeval.simulation.timeline import CUT_REASONS, SpeakerSegment
from voxeval.systems.call import AgentTurn, CallAgentBase, LineBlock, StopSpeaking
from voxeval.systems.turn_handling import TurnPolicy


def cut_agent(result: Any) -> SpeakerSegment:
    (seg,) = [s for s in result.timeline.speech("assistant") if s.interrupted]
    return seg


def test_a_barge_in_is_a_cut_for_caller_speech_with_the_words_that_went_out() -> None:
    caller = caller_with(ScheduledBehaviour(barge_in_at_s=1.0), "i need help", ["yes it is me"])
    agent = agent_with(TurnPolicy(barge_in_ms=300), [LONG_LINE, "ok"])
    seg = cut_agent(call(caller, agent))
    # stopped 1.3 s into 3.2 s: 3 of its 8 words went out
    assert seg.cut_reason == "caller_speech" and seg.intended_text == LONG_LINE
    assert seg.spoken_text == "a b c" and seg.said_text == "a b c"
    assert abs((seg.end - seg.start) - 1.3) < 0.03


def test_a_stop_for_a_backchannel_is_recorded_as_such() -> None:
    behaviour = ScheduledBehaviour(backchannels_at_s=(1.0,))
    caller = caller_with(behaviour, "i need help", ["yes"])
    agent = agent_with(TurnPolicy(barge_in_ms=200), [LONG_LINE, "ok"])
    seg = cut_agent(call(caller, agent))
    assert seg.cut_reason == "backchannel" and seg.spoken_text == "a b c"


class Quitter(CallAgentBase):
    """A streaming agent that greets with a long line and stops it after 1 s by itself."""

    name = "quitter"
    streaming = True

    def __init__(self) -> None:
        self.playing_frames = 0
        self.done: list[float] = []

    def start(self, scenario: Any, tools: Any) -> AgentTurn:
        return AgentTurn(LONG_LINE)

    def hear(self, block: LineBlock) -> Any:
        if not block.playing:
            return None
        if self.playing_frames + block.frames >= 50:
            frame = block.start + 50 - self.playing_frames - 1
            self.playing_frames = 10**9
            return StopSpeaking(frame)
        self.playing_frames += block.frames
        return None

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        self.done.append(spoken_fraction)


def test_an_agent_stopping_with_nothing_on_the_line_is_a_cut_too() -> None:
    result = call(ListCaller("hi", []), Quitter(), max_duration_s=4.0)
    seg = result.timeline.speech("assistant")[0]
    assert seg.interrupted and seg.cut_reason == "no_caller_speech"
    assert seg.spoken_text == "a b"  # 1 s of 3.2 s: 2.5 of its 8 words


def test_the_caller_giving_up_its_turn_is_marked_talked_over() -> None:
    caller = caller_with(ScheduledBehaviour(pause_s=2.0), "one two three ... four five six", [])
    agent = agent_with(TurnPolicy(barge_in_ms=None), [LONG_LINE])
    result = call(caller, agent)
    pieces = [s for s in result.timeline.speech("user") if s.turn == 0]
    assert [p.intended_text for p in pieces] == ["one two three", "four five six"]
    assert pieces[1].cut_reason == "talked_over" and pieces[1].interrupted


def test_the_end_of_the_call_cuts_the_agent_with_that_reason() -> None:
    agent = ListAgent([])
    agent.greeting = LONG_LINE
    result = call(ListCaller("hi", []), agent, max_duration_s=3.0)
    seg = result.timeline.speech("assistant")[0]
    assert seg.interrupted and seg.cut_reason == "call_end" and seg.end == 3.0
    assert seg.spoken_text and LONG_LINE.startswith(seg.spoken_text)
    assert set(CUT_REASONS) == {
        "caller_speech",
        "backchannel",
        "no_caller_speech",
        "talked_over",
        "call_end",
    }


def test_split_caller_turns_keep_each_pieces_text_in_audio() -> None:
    caller = caller_with(ScheduledBehaviour(pause_s=1.0), "one two ... three four", ["bye"])
    agent = agent_with(TurnPolicy(eot_silence_ms=1500), ["ok"])
    result = call(caller, agent, "audio")
    pieces = [s for s in result.timeline.speech("user") if s.turn == 0]
    assert [p.intended_text for p in pieces] == ["one two", "three four"]


def test_a_yield_fades_out_and_the_mix_is_the_tracks_as_written() -> None:
    caller = caller_with(ScheduledBehaviour(barge_in_at_s=1.0), "i need help", ["yes it is me"])
    agent = agent_with(TurnPolicy(barge_in_ms=300), [LONG_LINE, "ok"])
    result = call(caller, agent, "audio")
    seg = cut_agent(result)
    track = result.assistant_track.samples
    stop = round(seg.end * 16000)
    before = np.abs(track[stop - 480 : stop - 160]).max()  # 30-10 ms before the end: full
    last = np.abs(track[stop - 16 : stop]).max()  # the last 1 ms: nearly silent
    assert before > 0.25 and last < 0.02
    assert not track[stop : stop + 160].any()
    mixed = mix_tracks([result.user_track, result.assistant_track])
    assert np.array_equal(result.mixed.samples, mixed.samples)
