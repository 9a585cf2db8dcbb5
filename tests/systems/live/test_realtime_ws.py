"""The ``openai-realtime`` agent holds real calls against a scripted Realtime server
(tests/fakes/realtime_server.py) over a websocket on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from tests.fakes.realtime_server import RATE, CallTool, Fail, FakeRealtimeServer, Output, Say
from voxeval.audio import Audio
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.providers.tts.tts_espeak import EspeakTTS, espeak_binary
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.live.realtime_ws import RealtimeAgent

SCENARIO = "clinic-s03-cancel-free"
KEY_ENV = "VOXEVAL_TEST_REALTIME_KEY"
GREETING = "Riverbend clinic, how can I help?"
CONFIRMATION = "Your cleaning is cancelled, there is no fee. Goodbye!"
VERIFY = {"member_id": "BH2-7W9K", "date_of_birth": "1986-08-14", "last_name": "Redcloud"}
CANCEL = {"confirmation_code": "DM3R8X", "reason": "schedule_conflict"}


@pytest.fixture(scope="module")
def clinic() -> tuple[Scenario, Any]:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    return next(s for s in suite.scenarios if s.id == SCENARIO), suite.tools


@pytest.fixture
def server() -> Iterator[FakeRealtimeServer]:
    with FakeRealtimeServer() as fake:
        yield fake


def _agent(server: FakeRealtimeServer, monkeypatch: pytest.MonkeyPatch) -> RealtimeAgent:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    return RealtimeAgent(
        url=server.url, model="fake-realtime", api_key_env=KEY_ENV, voice="ash", turn_timeout_s=10
    )


def _rms(pcm: bytes) -> float:
    samples = np.frombuffer(pcm, "<i2").astype(np.float64) / 32768
    return float(np.sqrt(np.mean(samples**2)))


@pytest.mark.skipif(espeak_binary() is None, reason="espeak-ng is not installed")
def test_spoken_call_with_tools_against_a_realtime_server(
    clinic: tuple[Scenario, Any], monkeypatch: pytest.MonkeyPatch
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
            [Say(GREETING)],  # the greeting
            # turn 1: two calls in one response, a dependent call, then the spoken answer
            [CallTool("verify_patient", VERIFY), CallTool("list_appointments", {})],
            [CallTool("cancel_appointment", CANCEL)],
            [Say(CONFIRMATION)],
            # turn 2: the caller hangs up on the goodbye, nothing more is asked for
        )
        agent = _agent(server, monkeypatch)
        send = agent._send

        def slow_upload(**event: Any) -> None:
            # A slow uplink (or a busy machine): the upload takes long before the response
            # is asked for. The agent's latency and its tool times count from the request,
            # so the tool calls still fall before its answer on the call's clock.
            if event.get("type") == "input_audio_buffer.append":
                time.sleep(0.004)
            send(**event)

        monkeypatch.setattr(agent, "_send", slow_upload)
        caller = ScriptedCaller(behaviour_kind="none")  # no drawn pauses inside the turn
        result = run_call(scenario, caller, agent, tools, mode="audio", caller_voice=caller_voice)
        assert server.wait_closed()

    assert result.error is None and result.end_reason == "user_end_call"
    assert server.problems == [] and not server.script  # every scripted response was used
    assert agent._ws is None  # the engine closed the connection

    # Connection and session set-up.
    (conn,) = server.connections
    assert conn.path == "/v1/realtime?model=fake-realtime"
    assert conn.headers["Authorization"] == "Bearer sk-test"
    assert conn.headers["OpenAI-Beta"] == "realtime=v1"
    (update,) = server.of_type("session.update")
    session = update["session"]
    assert session["turn_detection"] is None and session["voice"] == "ash"
    assert session["input_audio_format"] == session["output_audio_format"] == "pcm16"
    assert "Riverbend Community Health Clinic" in session["instructions"]
    expected_tools = {s["function"]["name"]: s["function"] for s in tools.tool_schemas()}
    assert {t["name"] for t in session["tools"]} == set(expected_tools) and len(expected_tools) > 5
    for sent in session["tools"]:
        assert sent["type"] == "function"
        assert sent["parameters"] == expected_tools[sent["name"]]["parameters"]
    requests = server.of_type("response.create")
    assert len(requests) == 4
    assert scenario.agent.greeting in requests[0]["response"]["instructions"]

    # The caller's speech reached the server as 24 kHz PCM16 in 20 ms frames.
    appends = server.of_type("input_audio_buffer.append")
    assert appends and all(len(a["audio"]) <= 4 * 960 // 3 for a in appends)
    (pcm,) = server.committed_audio  # one spoken caller turn went to the agent
    users = result.timeline.speech("user")
    assert users[0].intended_text == scenario.user_goal.starting_utterance
    assert users[-1].intended_text == "Thank you, goodbye."
    sent_s = len(pcm) / 2 / RATE
    # what the agent's VAD took as the turn, with 100 ms of line either side
    spoken_s = users[0].end - users[0].start
    assert spoken_s - 0.1 <= sent_s <= spoken_s + 0.25
    assert sent_s > 1.0 and _rms(pcm) > 0.02

    # The tools ran on the scenario database and their results went back to the model.
    events = result.timeline.tools
    assert [e.name for e in events] == ["verify_patient", "list_appointments", "cancel_appointment"]
    assert all(e.valid and e.error is None for e in events)
    assert events[2].arguments == CANCEL
    assert list(server.tool_outputs.values()) == [
        json.loads(json.dumps(e.result, default=str)) for e in events
    ]
    assert result.initial_db["appointments"]["DM3R8X"]["status"] == "booked"
    cancelled = result.final_db["appointments"]["DM3R8X"]
    assert cancelled["status"] == "cancelled" and cancelled["cancellation_fee"] == 0
    assert result.final_db["slots"]["SL-221-0318-1000"]["status"] == "open"
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0

    # The agent's own speech is on the line, with its transcript.
    agents = result.timeline.speech("assistant")
    assert [s.intended_text for s in agents] == [GREETING, CONFIRMATION]
    for seg, text in zip(agents, (GREETING, CONFIRMATION), strict=True):
        spoken = agent_voice(text).duration
        assert 0.6 * spoken < seg.end - seg.start <= spoken + 0.01
        assert not seg.interrupted
    assert agents[1].transcript == CONFIRMATION  # what the scripted caller heard
    assert users[0].start > agents[0].end and agents[1].start > users[0].end
    assert agents[1].start - users[0].end < 0.7 + 1.0  # end-of-turn silence + tool round trips
    assert all(users[0].end < e.t < agents[1].start for e in events)
    assert result.assistant_track is not None
    loud = result.assistant_track.slice(agents[1].start, agents[1].end).samples
    assert float(np.sqrt(np.mean(loud**2))) > 0.02

    # Wall-clock mode: the engine really waited while the agent spoke (the caller's last line
    # is not waited for: nobody listens to it).
    assert result.wall_s >= agents[-1].end


def test_text_call_with_ga_events_and_unnamed_call_events(
    clinic: tuple[Scenario, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GA event names, and function calls whose ``arguments.done`` event has no name."""
    scenario, tool_specs = clinic
    tools = ToolRuntime(scenario, tool_specs)
    with FakeRealtimeServer(ga_events=True, call_names_in_done=False) as server:
        server.push(
            [Say(GREETING)],
            [CallTool("verify_patient", VERIFY)],
            [CallTool("cancel_appointment", CANCEL)],
            [Say(CONFIRMATION)],
        )
        result = run_call(
            scenario,
            ScriptedCaller(),
            _agent(server, monkeypatch),
            tools,
            mode="text",
            clock="virtual",
        )
        assert server.wait_closed()
    assert result.error is None and result.end_reason == "user_end_call"
    assert server.problems == [] and not server.script
    assert [e.name for e in result.timeline.tools] == ["verify_patient", "cancel_appointment"]
    assert result.final_db["appointments"]["DM3R8X"]["status"] == "cancelled"
    assert len(server.tool_outputs) == 2
    assert not server.of_type("input_audio_buffer.append")  # text mode sends text items
    (said,) = [e["item"] for e in server.of_type("conversation.item.create") if "role" in e["item"]]
    assert said["role"] == "user"
    assert said["content"] == [
        {"type": "input_text", "text": scenario.user_goal.starting_utterance}
    ]
    texts = [s.intended_text for s in result.timeline.speech("assistant")]
    assert texts == [GREETING, CONFIRMATION]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ([Fail("insufficient_quota", "You exceeded your current quota")], "exceeded your"),
        (None, "no scripted response"),  # the server answers with an error event
    ],
)
def test_server_failures_end_the_call_with_their_reason(
    clinic: tuple[Scenario, Any],
    monkeypatch: pytest.MonkeyPatch,
    reply: list[Output] | None,
    message: str,
) -> None:
    scenario, tool_specs = clinic
    with FakeRealtimeServer() as server:
        server.push([Say(GREETING)], *([reply] if reply else []))
        result = run_call(
            scenario,
            ScriptedCaller(),
            _agent(server, monkeypatch),
            ToolRuntime(scenario, tool_specs),
            mode="text",
            clock="virtual",
        )
    assert result.end_reason == "agent_error"  # the system under test failed
    assert result.system_fault is not None and result.system_fault.cause == "exception"
    assert result.error is not None and "openai-realtime" in result.error
    assert message in result.error
    assert [s.intended_text for s in result.timeline.speech("assistant")] == [GREETING]


def test_model_is_added_to_a_url_with_a_query() -> None:
    agent = RealtimeAgent(url="ws://127.0.0.1:9/v1/realtime?api-version=1", model="m")
    assert agent.url == "ws://127.0.0.1:9/v1/realtime?api-version=1&model=m"
