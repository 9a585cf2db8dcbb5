"""The ``openai-realtime`` agent with ``turn_detection: server_vad`` against the loopback
Realtime server running its energy VAD on the audio it receives (tests/fakes/realtime_server.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.fakes.realtime_server import RATE, CallTool, EnergyVAD, FakeRealtimeServer, Say
from voxeval.audio import Audio
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.providers.tts.tts_espeak import EspeakTTS, espeak_binary
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.caller_behaviour import CallerBehaviour, ScheduledBehaviour
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.live.realtime_system import RealtimeSystem
from voxeval.systems.live.realtime_vad import ServerVadRealtimeAgent
from voxeval.systems.live.realtime_ws import RealtimeAgent
from voxeval.systems.turn_handling import words_spoken

SCENARIO = "clinic-s03-cancel-free"
GREETING = "Riverbend clinic, how can I help?"
CONFIRMATION = "Your cleaning is cancelled, there is no fee. Goodbye!"
VERIFY = {"member_id": "BH2-7W9K", "date_of_birth": "1986-08-14", "last_name": "Redcloud"}
CANCEL = {"confirmation_code": "DM3R8X", "reason": "schedule_conflict"}
# 24 words: six seconds of the server's tone voice, long enough to be cut at two seconds
LONG = (
    "Let me read out the visits on your file together with the notes our front desk "
    "added to each one of them earlier this week for you"
)
SHORT_GOODBYE = "All set, goodbye!"
FRAME_S = 0.02
DETECTION_S = 0.06  # the fake's EnergyVAD needs three voiced 20 ms frames


@pytest.fixture(scope="module")
def clinic() -> tuple[Scenario, Any]:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    return next(s for s in suite.scenarios if s.id == SCENARIO), suite.tools


def _agent(server: FakeRealtimeServer) -> ServerVadRealtimeAgent:
    agent = RealtimeSystem.from_spec(
        SystemSpec.model_validate(
            {
                "name": "rt",
                "type": "openai-realtime",
                "url": server.url,
                "model": "fake-realtime",
                "api_key_env": None,
                "turn_detection": "server_vad",
                "threshold": 0.5,
                "prefix_padding_ms": 300,
                "silence_duration_ms": 500,
                "turn_timeout_s": 10,
            }
        )
    ).open_call()
    assert isinstance(agent, ServerVadRealtimeAgent)
    return agent


def hum(text: str) -> Audio:
    """The caller's stand-in voice: 0.3 s of a modulated 150 Hz tone per word (-20 dBFS)."""
    t = np.arange(int(max(1, len(text.split())) * 0.3 * 16000)) / 16000
    envelope = 0.6 + 0.4 * np.sin(2 * np.pi * 3 * t)
    return Audio((0.2 * envelope * np.sin(2 * np.pi * 150 * t)).astype(np.float32), 16000)


class BargingCaller(ScriptedCaller):
    """The scripted caller cutting into every agent utterance longer than two seconds."""

    def _behaviour(self, language: str) -> CallerBehaviour:
        return ScheduledBehaviour(barge_in_at_s=2.0)


def test_energy_vad_decides_at_positions_of_the_audio() -> None:
    vad = EnergyVAD(threshold=0.5, silence_duration_ms=500)
    quiet = np.zeros(RATE, np.int16)
    tone = (0.2 * 32767 * np.sin(2 * np.pi * 150 * np.arange(RATE) / RATE)).astype("<i2")
    pcm = np.concatenate([quiet, tone, quiet]).astype("<i2").tobytes()
    decisions = []
    for i in range(0, len(pcm), 1234):  # chunks that are not whole frames
        decisions += vad.feed(pcm[i : i + 1234])
    # speech from 1000 ms is confirmed after three frames; silence from 2000 ms after 500 ms
    assert decisions == [("speech_started", 1060), ("speech_stopped", 2500)]
    # a level under the threshold (-35 dBFS at 0.5) is no speech
    faint = EnergyVAD(threshold=0.5, silence_duration_ms=500)
    assert faint.feed((tone * 0.05).astype("<i2").tobytes()) == []


def test_turn_detection_option_picks_the_agent() -> None:
    spec = {"name": "rt", "type": "openai-realtime", "url": "ws://127.0.0.1:9/v1/realtime"}
    manual = RealtimeSystem.from_spec(SystemSpec.model_validate(spec))
    assert type(manual.open_call()) is RealtimeAgent  # default: voxeval decides turn ends
    assert "turn_detection" not in manual.identity()
    vad = RealtimeSystem.from_spec(
        SystemSpec.model_validate({**spec, "turn_detection": "server_vad", "threshold": 0.7})
    )
    agent = vad.open_call()
    assert isinstance(agent, ServerVadRealtimeAgent)
    assert agent._turn_detection() == {
        "type": "server_vad",
        "threshold": 0.7,
        "prefix_padding_ms": 300,
        "silence_duration_ms": 500,
        "create_response": True,
        "interrupt_response": True,
    }
    assert vad.identity()["turn_detection"]["threshold"] == 0.7


@pytest.mark.skipif(espeak_binary() is None, reason="espeak-ng is not installed")
def test_spoken_call_with_tools_and_server_turn_detection(
    clinic: tuple[Scenario, Any],
) -> None:
    scenario, tool_specs = clinic
    tts = EspeakTTS(speed=240)

    def agent_voice(text: str) -> Audio:
        return tts.synthesize(text, voice="en-us+m3")

    def caller_voice(text: str) -> Audio:
        return tts.synthesize(text, voice="en-us+f3")

    tools = ToolRuntime(scenario, tool_specs)
    with FakeRealtimeServer(voice=agent_voice) as server:
        server.push(
            [Say(GREETING)],
            [CallTool("verify_patient", VERIFY), CallTool("list_appointments", {})],
            [CallTool("cancel_appointment", CANCEL)],
            [Say(CONFIRMATION)],
        )
        agent = _agent(server)
        caller = ScriptedCaller(behaviour_kind="none")
        result = run_call(
            scenario, caller, agent, tools, mode="audio", caller_voice=caller_voice, clock="virtual"
        )
        assert server.wait_closed()

    assert result.error is None and result.end_reason == "user_end_call"
    assert server.problems == [] and not server.script
    (update, *barriers) = server.of_type("session.update")
    assert update["session"]["turn_detection"]["type"] == "server_vad"
    assert barriers and all(b["session"] == {} for b in barriers)
    # the client streamed the line and never committed: the server's detector did
    assert not server.of_type("input_audio_buffer.commit")
    appended_s = sum(len(a["audio"]) * 3 // 4 for a in server.of_type("input_audio_buffer.append"))
    # the whole line went out (the last block may reach past the caller's hang-up)
    assert result.duration_s <= appended_s / 2 / RATE <= result.duration_s + 5.0
    assert [k for k, _ in server.detections][:2] == ["speech_started", "speech_stopped"]
    assert len(server.of_type("response.create")) == 3  # greeting + two tool continuations

    users = result.timeline.speech("user")
    agents = result.timeline.speech("assistant")
    assert [s.intended_text for s in agents] == [GREETING, CONFIRMATION]
    assert not any(s.interrupted for s in agents)
    started_ms, stopped_ms = (ms for _, ms in server.detections[:2])
    # the server heard the caller's first turn where the line carried it
    assert users[0].start < started_ms / 1000 <= users[0].start + 0.2
    assert stopped_ms / 1000 == pytest.approx(users[0].end + 0.5, abs=0.08)
    # the agent answers from the server's decision plus its own measured response time
    assert stopped_ms / 1000 <= agents[1].start < stopped_ms / 1000 + 1.0
    (pcm,) = server.committed_audio
    assert len(pcm) / 2 / RATE == pytest.approx(stopped_ms / 1000 - started_ms / 1000 + 0.3)

    events = result.timeline.tools
    assert [e.name for e in events] == ["verify_patient", "list_appointments", "cancel_appointment"]
    assert all(users[0].end < e.t < agents[1].start for e in events)
    assert list(server.tool_outputs) and len(server.tool_outputs) == 3
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    assert server.cancels == 0 and agent.truncations == []
    assert [h["text"] for h in agent.history] == [GREETING, CONFIRMATION]


def test_barge_in_stops_the_reply_cancels_and_truncates(
    clinic: tuple[Scenario, Any],
) -> None:
    scenario, tool_specs = clinic
    tools = ToolRuntime(scenario, tool_specs)
    with FakeRealtimeServer() as server:  # the server speaks with its 0.25 s-per-word tone
        server.push(
            [Say(GREETING)],  # 1.5 s: too short to be cut
            [CallTool("verify_patient", VERIFY)],
            [Say(LONG)],  # cut at two seconds
            [Say(SHORT_GOODBYE)],  # the caller's cut-in turn is answered
        )
        agent = _agent(server)
        result = run_call(
            scenario,
            BargingCaller(behaviour_kind="none"),
            agent,
            tools,
            mode="audio",
            caller_voice=hum,
            clock="virtual",
        )
        assert server.wait_closed()

    assert result.error is None and result.end_reason == "user_end_call"
    assert server.problems == [] and not server.script
    agents = result.timeline.speech("assistant")
    users = [s for s in result.timeline.speech("user") if not s.backchannel]
    assert [s.intended_text for s in agents] == [GREETING, LONG, SHORT_GOODBYE]
    cut = agents[1]
    assert cut.interrupted and not agents[0].interrupted and not agents[2].interrupted
    # the caller cut in two seconds into the reply; the reply stopped once the server's
    # detector had three voiced frames
    barge = next(u for u in users if cut.start < u.start < cut.end)
    assert barge.start == pytest.approx(cut.start + 2.0, abs=1e-6)
    assert cut.end == pytest.approx(barge.start + DETECTION_S, abs=FRAME_S + 1e-6)

    # what a real client sends on a barge-in: cancel, then truncate at the played position
    kinds = [e["type"] for e in server.events]
    assert kinds.count("response.cancel") == 1 and server.cancels == 1
    assert kinds.index("response.cancel") < kinds.index("conversation.item.truncate")
    (truncate,) = server.truncations
    played_ms = truncate["audio_end_ms"]
    assert played_ms == pytest.approx((cut.end - cut.start) * 1000, abs=1)
    assert truncate["content_index"] == 0 and agent.truncations == [
        {k: truncate[k] for k in ("item_id", "content_index", "audio_end_ms")}
    ]
    # the service's and the agent's history keep what the caller heard
    long_s = len(LONG.split()) * 0.25
    heard = words_spoken(LONG, (cut.end - cut.start) / long_s)
    assert 0 < len(heard.split()) < len(LONG.split())
    assert server.transcripts[truncate["item_id"]] == heard
    assert [h["text"] for h in agent.history] == [GREETING, heard, SHORT_GOODBYE]
    # the caller's cut-in turn is answered after the server's silence rule
    assert agents[2].start >= barge.end + 0.5
    assert [e.name for e in result.timeline.tools] == ["verify_patient"]


def test_server_vad_needs_audio(clinic: tuple[Scenario, Any]) -> None:
    scenario, tool_specs = clinic
    with FakeRealtimeServer() as server:
        server.push([Say(GREETING)])
        agent = _agent(server)
        with pytest.raises(ConfigError, match="server_vad needs audio"):
            run_call(
                scenario,
                ScriptedCaller(),
                agent,
                ToolRuntime(scenario, tool_specs),
                mode="text",
                clock="virtual",
            )
    assert agent._ws is None  # closed all the same
