"""A live agent's open reply (``AgentTurn.open`` + ``MoreAudio``) on the virtual clock: the
reply grows on the line as its audio comes, the caller's line keeps reaching the agent, and
an agent that stops when the caller cuts in is recorded as yielding where its audio ended."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    CallAgentBase,
    LineBlock,
    MoreAudio,
    Reply,
    StopSpeaking,
)

RATE = 16000
CHUNK_S = 0.02


def returns(turn: AgentTurn) -> Callable[[], AgentTurn]:
    return lambda: turn


class LiveToneAgent(CallAgentBase):
    """Answers each caller turn (after 200 ms of quiet) with a 440 Hz tone of the next length
    in ``replies_s``, sent 20 ms at a time, as a live agent's audio arrives; with ``stops`` it
    stops sending the moment it hears the caller and says it yielded."""

    name = "live-tone"
    streaming = True

    def __init__(self, replies_s: list[float], stops: bool) -> None:
        self.replies_s, self.stops = list(replies_s), stops
        self.reply_s = 0.0
        self.speaking = False
        self.loud = self.quiet = 0
        self.sent = 0  # samples of the reply sent

    def _tone(self, seconds: float) -> Audio:
        n = round(seconds * RATE)
        t = (self.sent + np.arange(n)) / RATE
        self.sent += n
        return Audio((0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), RATE)

    def start(self, scenario: Any, tools: Any) -> AgentTurn | None:
        return None

    def hear(self, block: LineBlock) -> AgentAction | None:
        for i in range(block.frames):
            frame = block.start + i
            samples = block.frame(i)
            loud = samples is not None and float(np.sqrt(np.mean(samples**2))) > 0.02
            if self.speaking:
                if loud and self.stops:
                    self.speaking = False
                    self.loud, self.quiet = 1, 0  # the caller's turn has begun
                    return MoreAudio(frame, done=True, yielded=True)
                if self.sent >= round(self.reply_s * RATE):
                    self.speaking = False
                    return MoreAudio(frame, done=True)
                return MoreAudio(frame, self._tone(CHUNK_S))
            self.loud, self.quiet = (self.loud + 1, 0) if loud else (self.loud, self.quiet + 1)
            if self.loud and self.quiet >= 10 and self.replies_s:
                self.speaking, self.loud, self.sent = True, 0, 0
                self.reply_s = self.replies_s.pop(0)
                first = self._tone(CHUNK_S)
                turn = AgentTurn(text=None, audio=first, open=True, expected_s=3.0)
                return Reply(frame, returns(turn))
        return None

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        pass


def call(tmp_path: Path, barge_in_after_s: float | None, stops: bool = True) -> CallResult:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    return run_call(
        scenario,
        ListCaller("one two three", ["wait"], barge_in_after_s=barge_in_after_s),
        LiveToneAgent([2.0, 0.6], stops=stops),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
        agent_timeout_s=5.0,
        max_duration_s=20.0,
    )


def level(track: Audio, start: float, end: float) -> float:
    piece = track.samples[round(start * track.rate) : round(end * track.rate)]
    return float(np.sqrt(np.mean(piece**2))) if len(piece) else 0.0


def test_an_open_reply_grows_to_its_full_length(tmp_path: Path) -> None:
    result = call(tmp_path, barge_in_after_s=None)
    assert result.error is None and result.details["latency"]["clock"] == "virtual"
    reply = result.timeline.speech("assistant")[0]
    assert not reply.interrupted
    assert reply.end - reply.start == pytest.approx(2.0, abs=1e-3)
    assert result.assistant_track is not None
    assert level(result.assistant_track, reply.start, reply.end) == pytest.approx(
        0.3 / np.sqrt(2), abs=0.01
    )


def test_an_agent_that_stops_for_the_caller_is_cut_where_its_audio_ended(
    tmp_path: Path,
) -> None:
    result = call(tmp_path, barge_in_after_s=1.0)
    assert result.error is None
    reply = result.timeline.speech("assistant")[0]
    barge = result.timeline.speech("user")[1]
    assert barge.start - reply.start == pytest.approx(1.0, abs=1e-3)
    # the agent heard the caller's first loud frame and sent nothing after it
    assert reply.interrupted and reply.cut_reason == "caller_speech"
    assert reply.end - barge.start == pytest.approx(0.02, abs=1e-3)
    track = result.assistant_track
    assert track is not None
    assert level(track, reply.start, reply.end - 0.05) > 0.2
    second = result.timeline.speech("assistant")[1]  # its answer to the caller's turn
    assert second.start > barge.end and not second.interrupted
    assert level(track, reply.end, second.start) < 1e-4
    record = LiveCallRecord(timeline=result.timeline, final_db=result.final_db, expected_db={})
    [scored] = [t for t in turn_taking(record).details["turns"] if t["reason"] == "user_interrupt"]
    assert scored["evidence"]["yield_ms"] == pytest.approx(20.0, abs=1.0)


def test_an_agent_that_talks_on_plays_its_whole_reply_over_the_caller(tmp_path: Path) -> None:
    result = call(tmp_path, barge_in_after_s=1.0, stops=False)
    reply = result.timeline.speech("assistant")[0]
    assert not reply.interrupted  # it never yielded
    assert reply.end - reply.start == pytest.approx(2.0, abs=1e-3)


class StopsBeforeItBegins(LiveToneAgent):
    """Opens a reply that starts 0.5 s later (its audio arrived late), then stops at once."""

    def hear(self, block: LineBlock) -> AgentAction | None:
        if self.speaking:
            self.speaking = False
            return StopSpeaking(block.start)
        action = super().hear(block)
        if isinstance(action, Reply):
            late = AgentTurn(text=None, audio=self._tone(CHUNK_S), open=True, compute_s=0.5)
            return Reply(action.frame, returns(late))
        return action


def test_an_open_reply_stopped_before_it_began_does_not_hold_the_call(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    result = run_call(
        scenario,
        ListCaller("one two three", []),
        StopsBeforeItBegins([2.0], stops=True),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
        agent_timeout_s=5.0,
        max_duration_s=20.0,
    )
    assert result.end_reason == "user_end_call"  # not held open until max_duration
    [reply] = result.timeline.speech("assistant")
    assert reply.end - reply.start == pytest.approx(CHUNK_S, abs=1e-3)  # what had come
