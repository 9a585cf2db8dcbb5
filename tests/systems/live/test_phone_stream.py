"""The phone-stream system against a minimal agent that speaks the Twilio Media Streams protocol
through Pipecat's own serializer (tests/systems/phone_agent.py), in real time over 127.0.0.1:
three tracks, the event timeline, turn-taking, tool calls over MCP landing in the call's
database, marks, clear, and protocol errors scored as the agent's fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pipecat.serializers.twilio")
pytest.importorskip("mcp")

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from tests.systems.phone_agent import PhoneAgent, Script
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.protocols.latency_basis import latency_basis
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import CallResult, run_call
from voxeval.simulation.recorder import load_call, record_call
from voxeval.systems.factory import build_system, open_call
from voxeval.systems.live.phone_stream import PhoneStreamAgent

VERIFY = ("verify_member", {"member_id": "KX4", "date_of_birth": "1980-05-01"})
BOOK = ("book_visit", {"day": "friday"})


def phone_call(tmp_path: Path, script: Script, caller: Any) -> tuple[CallResult, Any, PhoneAgent]:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    with PhoneAgent(script) as agent:
        session = PhoneStreamAgent(agent.url, greeting_wait_s=1.0)
        result = run_call(
            scenario,
            caller,
            session,
            ToolRuntime(scenario, suite.tools),
            caller_voice=tone_voice,
            agent_timeout_s=5.0,
            max_duration_s=30.0,
        )
    agent.seen.t0 = session.stream.started_at
    return result, scenario, agent


def rms_between(track: Any, start: float, end: float) -> float:
    piece = track.samples[int(start * track.rate) : int(end * track.rate)]
    return float(np.sqrt(np.mean(piece**2))) if len(piece) else 0.0


def test_a_call_over_the_phone_stream_protocol(tmp_path: Path) -> None:
    script = Script(greeting_s=1.0, replies_s=[0.8, 0.8], tools={0: [VERIFY], 1: [BOOK]})
    caller = ListCaller("I want to book a visit", ["KX4 born 1980"])
    result, scenario, agent = phone_call(tmp_path, script, caller)
    assert result.system_fault is None and result.error is None
    assert result.end_reason == "user_end_call"
    seen = agent.seen
    assert seen.events[:2] == ["connected", "start"]
    assert "stop" in seen.events  # the network ends the stream when the caller hangs up
    # the token and addresses came with the call; the agent's MCP calls answered
    assert seen.custom["voxeval_scenario_id"] == scenario.id
    assert seen.custom["voxeval_tools_mcp_url"].endswith("/mcp")
    assert [r["status"] for r in seen.tool_results] == ["verified", "booked"]
    # Pipecat decoded the caller's 8 kHz mu-law into 16 kHz frames, 20 ms each
    assert seen.caller_rates == {16000} and seen.caller_frames > 100
    assert seen.marks_back == ["greeting", "reply-0", "reply-1"]
    # the three tracks; the agent's is its own telephone-band audio
    assert result.user_track is not None and result.assistant_track is not None
    assert result.mixed is not None
    said = result.timeline.speech("assistant")
    assert len(said) == 3
    for segment, seconds in zip(said, (1.0, 0.8, 0.8), strict=True):
        # Pipecat's streaming resampler keeps the last ~60 ms of each reply (never flushed)
        assert seconds - 0.1 <= segment.end - segment.start <= seconds + 0.02
        assert rms_between(result.assistant_track, segment.start, segment.end) > 0.1
    spectrum = np.abs(np.fft.rfft(result.assistant_track.samples))
    freqs = np.fft.rfftfreq(result.assistant_track.num_samples, 1 / result.assistant_track.rate)
    assert spectrum[freqs > 4000].sum() < 0.01 * spectrum.sum()  # nothing above 8 kHz/2
    # wall-clock timing: each reply starts on the line when its first audio left the agent
    # (at the next frame boundary: within 2 frames), and after the caller's turn plus the
    # agent's 400 ms endpointing
    sent = [t - seen.t0 for t in seen.replies_sent]
    assert len(sent) == 3
    for reply, left in zip(said, sent, strict=True):
        assert 0.0 <= reply.start - left <= 0.045, (reply.start, left)
    heard = result.timeline.speech("user")
    for reply, turn in zip(said[1:], heard, strict=False):
        assert reply.start - turn.end >= 0.4
    # tool calls over MCP: on the timeline, in the call's database, task completed
    assert [t.name for t in result.timeline.tools] == ["verify_member", "book_visit"]
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    taking = turn_taking(record)
    assert taking.ran and taking.value is not None and taking.value > 0.5
    assert result.details["latency"]["clock"] == "wall"
    # the call record and the summary's latency basis say the call ran in real time
    record_call(result, tmp_path / "unit", expected_db=scenario.expected_db)
    assert json.loads((tmp_path / "unit" / "call.json").read_text())["latency"]["clock"] == "wall"
    # the recording holds what an in-process call's does: tracks, events with the tool calls,
    # both databases and an empty diff against the expected one
    recorded = sorted(p.name for p in (tmp_path / "unit").iterdir())
    for name in ("call.json", "events.jsonl", "final_db.json", "initial_db.json", "db_diff.json"):
        assert name in recorded
    assert {"user.wav", "assistant.wav", "mixed.wav"} <= set(recorded)
    _, loaded_timeline, loaded_db = load_call(tmp_path / "unit")
    assert [t.name for t in loaded_timeline.tools] == ["verify_member", "book_visit"]
    assert loaded_db == result.final_db
    basis = latency_basis([tmp_path / "unit"])
    assert basis is not None and basis["clock"] == "wall" and basis["measured_by"] == "agent"


def test_the_system_from_a_run_config() -> None:
    spec = SystemSpec(name="bot", type="phone-stream", url="ws://127.0.0.1:8765/media")
    system = build_system(spec)
    assert system.identity() == {
        "type": "phone-stream",
        "url": "ws://127.0.0.1:8765/media",
        "clock": "wall",
    }
    session = open_call(system)
    assert isinstance(session, PhoneStreamAgent) and session.clock == "wall"
    with pytest.raises(ConfigError, match="url"):
        build_system(SystemSpec(name="bot", type="phone-stream", url="http://x"))
    with pytest.raises(ConfigError, match="greeting_wait"):
        build_system(SystemSpec(name="bot", type="phone-stream", url="ws://x", greeting_wait=1))


def test_text_mode_is_refused_as_our_configuration(tmp_path: Path) -> None:
    with PhoneAgent(Script(greeting_s=None)) as agent:
        suite = load_scenario_suite(write_suite(tmp_path / "suite"))
        scenario = suite.scenarios[0]
        with pytest.raises(ConfigError, match=r"simulation\.mode: audio"):
            run_call(
                scenario,
                ListCaller("hello", []),
                PhoneStreamAgent(agent.url, greeting_wait_s=0.1),
                ToolRuntime(scenario, suite.tools),
                mode="text",
            )


def test_clear_makes_the_agent_yield(tmp_path: Path) -> None:
    script = Script(greeting_s=None, replies_s=[3.0, 0.6], yield_after_frames=10)
    caller = ListCaller("I want to book a visit", ["wait a moment please"], barge_in_after_s=1.0)
    result, _, agent = phone_call(tmp_path, script, caller)
    assert result.system_fault is None
    assert agent.seen.cleared == 1
    reply = result.timeline.speech("assistant")[0]
    assert reply.interrupted
    # the caller barged in 1 s into the 3 s reply; the agent cleared after 10 frames (200 ms)
    # of it, plus the resamplers' delay; this agent reads nothing while it sends a reply
    # (1.5 s at twice real time), so it hears the barge-in late
    assert 1.2 <= reply.end - reply.start <= 2.3
    assert result.assistant_track is not None
    assert rms_between(result.assistant_track, reply.end + 0.05, reply.start + 3.0) < 0.01
    assert agent.seen.marks_back[0] == "reply-0"  # a cleared mark comes back at once


def test_a_normal_close_is_the_agent_hanging_up(tmp_path: Path) -> None:
    script = Script(greeting_s=0.6, replies_s=[0.6], hang_up=True)
    result, _, agent = phone_call(tmp_path, script, ListCaller("I want to book a visit", []))
    assert result.system_fault is None and result.error is None
    assert result.end_reason == "agent_end_call"
    said = result.timeline.speech("assistant")
    assert len(said) == 2 and result.timeline.end is not None
    # it hung up once its reply had played: the call ends right after it, before the caller
    # would have said goodbye (0.6 s after the reply)
    assert 0.0 <= result.timeline.end.t - said[-1].end < 0.3
    assert agent.seen.marks_back == ["greeting", "reply-0"]


@pytest.mark.parametrize("fault", ["invalid_json", "drop"])
def test_a_protocol_error_or_disconnect_is_the_agents_fault(tmp_path: Path, fault: str) -> None:
    script = Script(greeting_s=0.4, fault=fault)
    result, _, _ = phone_call(tmp_path, script, ListCaller("hello there", []))
    assert result.end_reason == "agent_error"
    assert result.system_fault is not None
    assert ("invalid JSON" if fault == "invalid_json" else "dropped") in str(result.system_fault)


def test_no_agent_listening_is_the_agents_fault(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    result = run_call(
        scenario,
        ListCaller("hello", []),
        PhoneStreamAgent("ws://127.0.0.1:9/nobody", connect_timeout_s=2),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
    )
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert "cannot connect" in str(result.system_fault)


def test_a_barge_in_while_the_reply_still_arrives_drops_what_was_not_played(
    tmp_path: Path,
) -> None:
    """The agent sends a 3 s reply at twice real time from a task of its own and listens
    meanwhile (as Pipecat's transport does). The caller cuts in 1 s into it, while the reply's
    audio is still arriving: its frames reach the agent at once, the agent clears and stops
    sending, and the audio voxeval had received but not played is dropped: the agent track
    stops at the clear. The reply is marked cut by the caller's speech and turn-taking scores
    the yield, as for an in-process agent."""
    script = Script(
        greeting_s=None, replies_s=[3.0, 0.6], yield_after_frames=10, listen_while_speaking=True
    )
    caller = ListCaller("I want to book a visit", ["wait a moment please"], barge_in_after_s=1.0)
    result, _, agent = phone_call(tmp_path, script, caller)
    assert result.system_fault is None and result.error is None, result.error
    assert agent.seen.cleared == 1
    # the clear came while the reply was still being sent (1.5 s at twice real time)
    [unsent] = agent.seen.unsent_s
    assert unsent > 0.1
    reply = result.timeline.speech("assistant")[0]
    barge = result.timeline.speech("user")[1]
    assert barge.start - reply.start == pytest.approx(1.0, abs=0.05)
    assert reply.interrupted and reply.cut_reason == "caller_speech"
    # 1 s, then 10 frames (200 ms) of the caller's speech and the resamplers' delays: the
    # cut comes well before the 1.75 s a reply taken whole allowed at the earliest
    assert 1.1 <= reply.end - reply.start <= 1.65
    track = result.assistant_track
    assert track is not None
    assert rms_between(track, reply.start + 0.1, reply.end - 0.1) > 0.1
    # received, never played: not on the track
    assert rms_between(track, reply.end + 0.05, reply.start + 3.0) < 0.01
    assert agent.seen.marks_back == ["reply-1"]  # the cut reply's mark was never sent
    record = LiveCallRecord(timeline=result.timeline, final_db=result.final_db, expected_db={})
    taking = turn_taking(record)
    assert taking.ran and taking.value is not None
    yields = [t for t in taking.details["turns"] if t["reason"] == "user_interrupt"]
    assert len(yields) == 1
    assert yields[0]["evidence"]["yield_ms"] == pytest.approx(
        (reply.end - barge.start) * 1000, abs=1.0
    )
