"""Golden full-duplex scenarios (issue #13): the engine records what each party did.

Timing model as in test_engine.py: words 0.4 s (text mode: 2.5 words/s), agent latency fixed,
caller gap 0.6 s. Every expected time is worked out by hand in the comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.errors import ConfigError
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.caller_behaviour import ScheduledBehaviour
from voxeval.simulation.engine import EngineSettings, run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.perturbations import parse_conditions
from voxeval.simulation.recorder import record_call
from voxeval.simulation.simulation_config import parse_simulation
from voxeval.systems.call import CallAgentBase
from voxeval.systems.turn_handling import TurnPolicy

FIXED = LatencyModel(agent=ComponentLatency(kind="fixed", ms=800))
LONG_LINE = "a b c d e f g h"  # 3.2 s


def agent_with(policy: TurnPolicy, lines: list[str], **kw: Any) -> ListAgent:
    agent = ListAgent(lines, **kw)
    agent.turn_policy = policy  # type: ignore[attr-defined]
    return agent


def caller_with(behaviour: ScheduledBehaviour, opening: str, lines: list[str]) -> ListCaller:
    caller = ListCaller(opening, lines)
    caller.behaviour = behaviour  # type: ignore[attr-defined]
    return caller


def spans(result: Any, speaker: str) -> list[tuple[float, float, bool]]:
    return [
        (round(s.start, 2), round(s.end, 2), s.interrupted) for s in result.timeline.speech(speaker)
    ]


def call(caller: Any, agent: Any, mode: str = "text", **kw: Any) -> Any:
    if mode == "audio":
        kw.setdefault("caller_voice", tone_voice)
        kw.setdefault("agent_voice", tone_voice)
    kw.setdefault("latency_model", FIXED)
    return run_call(None, caller, agent, NoTools(), mode=mode, **kw)  # type: ignore[arg-type]


def barged(yield_ms: float | None, mode: str = "text") -> Any:
    """Greeting 0.8-1.6; caller 2.2-3.4; the agent's long line from 4.9 (3.2 s, to 8.1); the
    caller cuts in 1 s into it (5.9) with a 3.6 s turn (to 9.5)."""
    caller = caller_with(
        ScheduledBehaviour(barge_in_at_s=1.0),
        "i need help",
        ["no no stop that is not what i asked"],
    )
    agent = agent_with(TurnPolicy(barge_in_ms=yield_ms), [LONG_LINE, "ok"])
    return call(caller, agent, mode, settings=EngineSettings(frame_ms=10))


@pytest.mark.parametrize("mode", ["text", "audio"])
def test_an_agent_that_yields_fast_scores_a_better_yield_than_a_slow_one(mode: str) -> None:
    fast, slow = barged(150, mode), barged(1500, mode)
    # the fast agent stops 150 ms after the caller cut in, the slow one 1.5 s after
    assert spans(fast, "assistant")[1] == (4.9, 6.05, True)
    assert spans(slow, "assistant")[1] == (4.9, 7.4, True)
    assert spans(fast, "user")[1] == spans(slow, "user")[1] == (5.9, 9.5, False)
    yields = []
    for result in (fast, slow):
        turn = turn_taking(LiveCallRecord(timeline=result.timeline)).details["turns"][1]
        assert turn["reason"] == "user_interrupt"
        yields.append((turn["evidence"]["yield_ms"], turn["evidence"]["yield_score"]))
    assert yields[0][0] == pytest.approx(150) and yields[1][0] == pytest.approx(1500)
    assert yields[0][1] > yields[1][1]


def test_an_agent_that_ignores_a_barge_in_keeps_talking() -> None:
    result = barged(None)
    # the whole line is played over the caller's turn; it is not marked interrupted
    assert spans(result, "assistant")[1] == (4.9, 8.1, False)
    assert spans(result, "user")[1] == (5.9, 9.5, False)
    turn = turn_taking(LiveCallRecord(timeline=result.timeline)).details["turns"][1]
    assert turn["evidence"]["yield_ms"] == pytest.approx(2200)  # 8.1 - 5.9
    assert turn["evidence"]["yield_score"] == pytest.approx(0.0)


QUICK = LatencyModel(agent=ComponentLatency(kind="fixed", ms=300))


def paused_call(patience_ms: float) -> tuple[Any, ListAgent]:
    """Greeting 0.3-1.1; caller 1.7-2.9 "one two three", a 1.2 s pause, 4.1-4.9 "four five"
    (one turn); agent latency 0.3 s, end-of-turn silence 0.7 s."""
    caller = caller_with(ScheduledBehaviour(pause_s=1.2), "one two three ... four five", [])
    agent = agent_with(TurnPolicy(patience_ms=patience_ms), ["a b", "c d"])
    return call(caller, agent, latency_model=QUICK), agent


def test_a_patient_agent_waits_out_a_pause_and_an_eager_one_jumps_in() -> None:
    eager, eager_agent = paused_call(0)
    patient, patient_agent = paused_call(800)
    for result in (eager, patient):
        users = result.timeline.speech("user")
        assert [(u.start, u.end, u.turn) for u in users[:2]] == [(1.7, 2.9, 0), (4.1, 4.9, 0)]
    # eager: end of turn 0.7 s into the pause (3.6), speaks at 3.9, inside the pause
    assert spans(eager, "assistant")[1][0] == pytest.approx(3.9)
    assert eager_agent.heard[0] == "one two three"
    # patient: 0.7 s + 0.8 s of silence needed; the 1.2 s pause does not end the turn and it
    # answers the whole turn 1.5 s after the caller's last word (4.9 + 1.5 + 0.3)
    assert spans(patient, "assistant")[1][0] == pytest.approx(6.7)
    assert patient_agent.heard[0] == "one two three four five"
    assert patient.end_reason == eager.end_reason == "user_end_call"


def test_the_caller_yields_when_the_agent_talks_over_it_for_a_second() -> None:
    """The agent ignores barge-ins and jumps into the pause (onset 3.9, its line to 7.1); the
    caller resumes at 4.1 and gives up its turn 1 s after the agent started (4.9), fading out
    over 10 ms (4.91)."""
    caller = caller_with(
        ScheduledBehaviour(pause_s=1.2), "one two three ... four five six seven eight", []
    )
    agent = agent_with(TurnPolicy(barge_in_ms=None), [LONG_LINE, "c d"])
    result = call(caller, agent, latency_model=QUICK)
    users = result.timeline.speech("user")
    assert (users[1].start, users[1].end, users[1].interrupted) == (4.1, 4.91, True)
    assert users[1].cut_reason == "talked_over"
    assert spans(result, "assistant")[1] == (3.9, 7.1, False)


def test_backchannels_are_marked_and_do_not_stop_or_get_answered() -> None:
    caller = caller_with(ScheduledBehaviour(backchannels_at_s=(1.0,)), "i need help", [])
    agent = agent_with(TurnPolicy(barge_in_ms=500), [LONG_LINE])
    result = call(caller, agent)
    backchannels = [s for s in result.timeline.speech("user") if s.backchannel]
    # "mm-hm" (0.4 s) 1 s into the agent's line at 4.9; shorter than the 0.5 s threshold
    assert [(b.start, b.end, b.intended_text) for b in backchannels] == [(5.9, 6.3, "mm-hm")]
    assert spans(result, "assistant")[1] == (4.9, 8.1, False)
    assert agent.heard == ["i need help"]  # the backchannel was not taken as a turn
    # the caller answered the line after its end, not at the backchannel
    assert [s.start for s in result.timeline.speech("user") if not s.backchannel][1] == 8.7


class SilentAgent(ListAgent):
    def respond(self, user_audio: Any, user_text: Any) -> Any:
        from voxeval.simulation.parties import AgentTurn

        self.heard.append(user_text)
        return AgentTurn(None)


def test_a_pause_never_times_out_the_agent() -> None:
    """A silent agent is timed out from the end of the caller's turn, not from a pause."""
    caller = caller_with(ScheduledBehaviour(pause_s=3.0), "one two three ... four five", [])
    agent = SilentAgent([])
    result = call(caller, agent, agent_timeout_s=2.0)
    # caller 2.2-3.4, 3 s pause, 6.4-7.2: the 2 s timeout runs from 7.2
    assert result.end_reason == "agent_timeout" and result.duration_s == pytest.approx(9.2)
    assert agent.heard == ["one two three", "four five"]  # it listened through the pause


def noisy_call(seed: int, condition: str = "noisy") -> Any:
    clean, noisy = parse_conditions([{"name": "noise", "environment": "street", "snr_db": 15}])
    chosen = noisy if condition == "noisy" else clean
    return call(
        ListCaller("i need help", ["yes it is me"]),
        ListAgent(["a b c", "d e f g"]),
        "audio",
        line_effects=chosen.line_effects(seed),
        seed=seed,
    )


def test_street_noise_runs_between_caller_turns_and_repeats_bit_for_bit(tmp_path: Path) -> None:
    noisy, again, clean = noisy_call(5), noisy_call(5), noisy_call(5, "clean")

    def between_turns(result: Any) -> tuple[float, float]:
        """RMS of user.wav between the caller's first two turns (no caller speech there),
        and of its first turn."""
        user = result.timeline.speech("user")
        gap = (user[0].end + 0.2, user[1].start - 0.2)
        assert gap[1] - gap[0] > 1.0
        rms = []
        for a, b in (gap, (user[0].start, user[0].end)):
            piece = result.user_track.slice(a, b).samples.astype(np.float64)
            rms.append(float(np.sqrt(np.mean(piece**2))))
        return rms[0], rms[1]

    assert between_turns(clean)[0] == 0.0
    gap_rms, speech_rms = between_turns(noisy)
    level_db = 20 * np.log10(speech_rms / gap_rms)
    assert 5 < level_db < 30  # noise between the turns, around 15 dB below the speech
    record_call(noisy, tmp_path / "a")
    record_call(again, tmp_path / "b")
    assert (tmp_path / "a" / "user.wav").read_bytes() == (tmp_path / "b" / "user.wav").read_bytes()
    assert noisy_call(6).user_track != noisy.user_track  # another seed, other noise


def test_tool_calls_of_a_measured_agent_are_at_their_observed_times() -> None:
    class ToolAgent(ListAgent):
        def respond(self, user_audio: Any, user_text: Any) -> Any:
            import time

            from voxeval.simulation.parties import AgentTurn

            self.heard.append(user_text)
            if len(self.heard) > 1:
                return AgentTurn("bye", end_call=True)
            time.sleep(0.05)
            record = self._tools.call("lookup", {"n": 1})
            time.sleep(0.05)
            return AgentTurn("done", tool_calls=(record,))

        def start(self, scenario: Any, tools: Any) -> Any:
            self._tools = tools
            return None

    class Tools(NoTools):
        def call(self, name: str, arguments: Any) -> Any:
            from voxeval.simulation.parties import ToolCallRecord

            return ToolCallRecord(name, arguments, {"ok": True}, kind="read")

    agent = ToolAgent([])
    result = run_call(None, ListCaller("hi", ["bye"]), agent, Tools(), mode="text")  # type: ignore[arg-type]
    (event,) = result.timeline.tools
    onset = result.timeline.speech("assistant")[0].start
    decided = result.timeline.speech("user")[0].end + 0.7
    # called ~50 ms into the agent's ~100 ms of work, not at a modelled fraction of it
    assert decided + 0.04 <= event.t <= decided + 0.2 and onset >= event.t + 0.04


def test_frame_and_turn_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="frame_ms"):
        EngineSettings(frame_ms=5)
    with pytest.raises(ConfigError, match="yield_ms was removed"):
        parse_simulation({"yield_ms": 300})
    sim = parse_simulation({"frame_ms": 40, "patience_ms": 500, "barge_in_ms": None})
    settings = sim.engine_settings()
    assert (settings.frame_ms, settings.patience_s, settings.barge_in_s) == (40, 0.5, None)
    assert settings.turn_policy() == TurnPolicy(
        patience_ms=500, barge_in_ms=None, min_interruption_words=1
    )


def test_a_streaming_agent_that_never_takes_in_the_line_is_a_system_fault() -> None:
    from voxeval.systems.call import StopSpeaking

    class Stuck(CallAgentBase):
        name = "stuck"
        streaming = True

        def start(self, scenario: Any, tools: Any) -> Any:
            return None

        def hear(self, block: Any) -> Any:
            return StopSpeaking(block.start - 1)

        def utterance_done(self, text: str, fraction: float) -> None:
            return None

    result = call(ListCaller("hi", []), Stuck())
    assert result.end_reason == "agent_error"
    assert result.system_fault is not None and result.system_fault.cause == "malformed_output"


class Eager(CallAgentBase):
    """A streaming agent that answers 0.2 s into the caller's speech (talking over it) and
    stops its reply once the caller has gone on talking over it for two frames."""

    name = "eager"
    streaming = True

    def __init__(self) -> None:
        self.run = 0
        self.answered = False
        self.was_playing = False
        self.done: tuple[str, float] | None = None

    def start(self, scenario: Any, tools: Any) -> Any:
        return None

    def hear(self, block: Any) -> Any:
        from voxeval.simulation.parties import AgentTurn
        from voxeval.systems.call import Reply, StopSpeaking

        if block.playing != self.was_playing:
            self.run, self.was_playing = 0, block.playing
        if block.speech is None:
            self.run = 0
            return None
        for i, speaking in enumerate(block.speech):
            self.run = self.run + 1 if speaking else 0
            if block.playing and self.run >= 2:
                return StopSpeaking(block.start + i)
            if not self.answered and not block.playing and self.run >= 10:
                self.answered = True
                return Reply(block.start + i, lambda: AgentTurn("sure sure sure"))
        return None

    def utterance_done(self, text: str, fraction: float) -> None:
        self.done = (text, fraction)


def test_a_streaming_agent_may_talk_over_the_caller_and_decides_its_own_yield() -> None:
    """Caller 0.1-2.1 (no greeting, the line opens at 0.1); the agent decides after 10 frames
    (0.3), speaks at 0.3 + 0.8 = 1.1 over the caller and stops 2 frames later (1.14). It says
    nothing more: timed out 1 s after the caller's turn."""
    agent = Eager()
    result = call(ListCaller("one two three four five", []), agent, agent_timeout_s=1.0)
    assert spans(result, "user")[0] == (0.1, 2.1, False)
    # the caller started first; the agent's stop is still a cut, with the caller on the line
    assert spans(result, "assistant")[0] == (1.1, 1.14, True)
    assert agent.done == ("sure sure sure", pytest.approx(0.04 / 1.2))
    assert (result.end_reason, result.duration_s) == ("agent_timeout", pytest.approx(3.1))
