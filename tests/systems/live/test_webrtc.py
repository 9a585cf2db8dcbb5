"""The webrtc system against a minimal aiortc agent on 127.0.0.1 (tests/systems/webrtc_agent.py)
answering the offer as Pipecat's runner does: real Opus over real RTP/DTLS, in real time; three
tracks, the event timeline, turn-taking, and protocol errors scored as the agent's fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("aiortc")

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from tests.systems.webrtc_agent import Script, WebRTCTestAgent
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.live.webrtc_system import WebRTCAgent


def webrtc_call(
    tmp_path: Path, script: Script, caller: Any, url: str | None = None
) -> tuple[CallResult, WebRTCAgent, WebRTCTestAgent]:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    with WebRTCTestAgent(script) as agent:
        session = WebRTCAgent(url or agent.url, greeting_wait_s=1.5, connect_timeout_s=5)
        result = run_call(
            scenario,
            caller,
            session,
            ToolRuntime(scenario, suite.tools),
            caller_voice=tone_voice,
            agent_timeout_s=5.0,
            max_duration_s=30.0,
        )
    return result, session, agent


def rms_between(track: Any, start: float, end: float) -> float:
    piece = track.samples[int(start * track.rate) : int(end * track.rate)]
    return float(np.sqrt(np.mean(piece**2))) if len(piece) else 0.0


def test_a_call_over_webrtc_records_three_tracks_and_turn_taking(tmp_path: Path) -> None:
    script = Script(greeting_s=1.0, replies_s=[0.8, 0.6])
    caller = ListCaller("I want to book a visit", ["KX4 born 1980"])
    result, _, agent = webrtc_call(tmp_path, script, caller)
    assert result.system_fault is None and result.error is None
    assert result.end_reason == "user_end_call"
    # the offer went out as Pipecat's transport expects it
    offer = agent.seen.offers[0]
    assert offer["type"] == "offer" and offer["sdp"].startswith("v=0")
    assert offer["pc_id"] is None and offer["restart_pc"] is False
    assert offer["request_data"]["voxeval_scenario_id"] == "book-1"
    # the agent heard the caller's speech through Opus (tone words: 0.4 s each), in real time:
    # one 20 ms packet per 20 ms, never a flood
    assert agent.seen.loud_frames * 0.02 >= 0.4 * 5
    assert result.duration_s - 0.5 <= agent.seen.caller_s <= result.duration_s + 2.0
    # the three tracks; the agent's replies are its own 440 Hz tones, each its length
    assert result.user_track is not None and result.assistant_track is not None
    assert result.mixed is not None
    said = result.timeline.speech("assistant")
    assert len(said) == 3
    for segment, seconds in zip(said, (1.0, 0.8, 0.6), strict=True):
        assert segment.end - segment.start == pytest.approx(seconds, abs=0.1)
        assert rms_between(result.assistant_track, segment.start + 0.1, segment.end - 0.1) > 0.1
    track = result.assistant_track
    spectrum = np.abs(np.fft.rfft(track.samples))
    freqs = np.fft.rfftfreq(track.num_samples, 1 / track.rate)
    assert 430 <= freqs[int(np.argmax(spectrum))] <= 450
    # wall clock: each reply starts after the caller's turn plus the agent's endpointing
    heard = result.timeline.speech("user")
    for reply, turn in zip(said[1:], heard, strict=False):
        assert reply.start - turn.end >= 0.35
    record = LiveCallRecord(timeline=result.timeline, final_db=result.final_db, expected_db={})
    taking = turn_taking(record)
    assert taking.ran and taking.value is not None and taking.value > 0.5
    assert result.details["latency"]["clock"] == "wall"
    assert result.details["latency"]["measured_by"] == "agent"


@pytest.mark.parametrize(
    ("fault", "words"),
    [("http_500", "HTTP 500"), ("not_json", "invalid JSON"), ("no_answer", "not an SDP")],
)
def test_a_protocol_error_is_the_agents_fault(tmp_path: Path, fault: str, words: str) -> None:
    result, _, _ = webrtc_call(tmp_path, Script(fault=fault), ListCaller("hello there", []))
    assert result.end_reason == "agent_error"
    assert result.system_fault is not None
    assert words in str(result.system_fault)


def test_no_agent_listening_is_the_agents_fault(tmp_path: Path) -> None:
    result, _, _ = webrtc_call(
        tmp_path, Script(), ListCaller("hello", []), url="http://127.0.0.1:9/api/offer"
    )
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert result.system_fault.cause == "disconnect"


def test_the_agent_closing_the_connection_hangs_up(tmp_path: Path) -> None:
    script = Script(greeting_s=0.8, replies_s=[], hang_up=True)
    result, _, _ = webrtc_call(tmp_path, script, ListCaller("hello there", ["more words"]))
    assert result.system_fault is None
    assert result.end_reason == "agent_end_call"
    # the caller's opening (0.8 s of tone words) was heard before the agent left
    [turn] = result.timeline.speech("user")
    assert turn.end - turn.start == pytest.approx(0.8, abs=0.05)
    assert result.duration_s < 5.0


def test_the_webrtc_system_is_configured_like_any_system() -> None:
    from voxeval.config import SystemSpec
    from voxeval.errors import ConfigError
    from voxeval.registry import lookup

    spec = SystemSpec(name="bot", type="webrtc", url="http://127.0.0.1:7860/api/offer")
    system = lookup("system", "webrtc").from_spec(spec)
    assert system.identity() == {
        "type": "webrtc",
        "url": "http://127.0.0.1:7860/api/offer",
        "clock": "wall",
    }
    call = system.open_call()
    assert isinstance(call, WebRTCAgent) and call.clock == "wall" and call.reports_latency
    with pytest.raises(ConfigError, match="url"):
        lookup("system", "webrtc").from_spec(SystemSpec(name="bot", type="webrtc", url="ws://x"))


def test_a_pipecat_bot_on_pipecats_own_small_webrtc_transport(tmp_path: Path) -> None:
    pytest.importorskip("pipecat.transports.smallwebrtc.transport")
    from tests.systems.pipecat_webrtc_echo import PipecatEchoBot

    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    with PipecatEchoBot() as bot:
        result = run_call(
            scenario,
            ListCaller("book a visit please", []),
            WebRTCAgent(bot.url, greeting_wait_s=0.5, connect_timeout_s=10),
            ToolRuntime(scenario, suite.tools),
            caller_voice=tone_voice,
            agent_timeout_s=5.0,
            max_duration_s=15.0,
        )
        heard, replies = bot.echoes[0].heard_frames, bot.echoes[0].replies
    assert result.system_fault is None and result.error is None, result.error
    assert result.end_reason == "user_end_call"
    assert heard > 50 and replies == 1  # Pipecat's transport decoded the caller's line
    # the bot's reply is the caller's 300 Hz tone played back through Pipecat's output track
    [reply] = result.timeline.speech("assistant")
    turn = result.timeline.speech("user")[0]  # then the caller's goodbye
    assert reply.start - turn.end >= 0.4  # after the bot's endpointing
    # all of the caller's words came back (Opus and resampling add a short tail; real time, so a
    # loaded machine can delay frames)
    assert reply.end - reply.start == pytest.approx(turn.end - turn.start, abs=0.5)
    assert result.assistant_track is not None
    track = result.assistant_track
    spectrum = np.abs(np.fft.rfft(track.samples))
    freqs = np.fft.rfftfreq(track.num_samples, 1 / track.rate)
    assert 290 <= freqs[int(np.argmax(spectrum))] <= 310
    assert result.details["latency"]["clock"] == "wall"


def test_the_caller_barges_in_over_webrtc_and_the_agent_track_shows_the_cut(
    tmp_path: Path,
) -> None:
    """The agent greets for 3 s; the caller cuts in 1 s into it; the agent hears it over
    WebRTC and stops. Its reply was taken as it arrived, so the track stops where the agent
    did, the greeting is marked interrupted by the caller's speech and turn-taking scores the
    yield, as for an in-process agent."""
    script = Script(greeting_s=3.0, replies_s=[0.6], stops_on_speech=True)
    caller = ListCaller("wait a moment please", [], barge_in_after_s=1.0)
    result, _, agent = webrtc_call(tmp_path, script, caller)
    assert result.system_fault is None and result.error is None, result.error
    # the agent heard the caller while it spoke and left most of its greeting unsaid
    [dropped] = agent.seen.dropped_s
    assert 1.2 <= dropped <= 2.0
    greeting = result.timeline.speech("assistant")[0]
    barge = result.timeline.speech("user")[0]
    assert barge.start - greeting.start == pytest.approx(1.0, abs=0.05)
    assert greeting.interrupted and greeting.cut_reason == "caller_speech"
    # it stopped once the caller's words reached it (Opus, jitter buffer): well before 3 s
    assert 1.0 < greeting.end - greeting.start < 1.8
    track = result.assistant_track
    assert track is not None
    assert rms_between(track, greeting.start + 0.1, greeting.end - 0.1) > 0.1
    assert rms_between(track, greeting.end + 0.05, 3.0) < 0.01  # nothing after the cut
    # then it answered the caller's turn, uncut
    reply = result.timeline.speech("assistant")[1]
    assert not reply.interrupted and reply.start > barge.end
    assert reply.end - reply.start == pytest.approx(0.6, abs=0.1)
    record = LiveCallRecord(timeline=result.timeline, final_db=result.final_db, expected_db={})
    taking = turn_taking(record)
    assert taking.ran and taking.value is not None
    yields = [t for t in taking.details["turns"] if t["reason"] == "user_interrupt"]
    assert len(yields) == 1
    assert yields[0]["evidence"]["yield_ms"] == pytest.approx(
        (greeting.end - barge.start) * 1000, abs=1.0
    )
