"""Full spoken calls through the embedded TTS (Piper) and ASR (Whisper tiny)."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, chat_tool_call
from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.providers import create_provider
from voxeval.providers.voices.speech_renderer import SpeechRenderer
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.callers.llm_caller import LLMCaller
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.systems.cascade import CascadeAgent
from voxeval.systems.scripted import ScriptedAgent

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def asr() -> Any:
    return create_provider("asr", "whisper-tiny-en")


@pytest.mark.slow
def test_scripted_parties_complete_a_builtin_scenario_in_audio(asr: Any) -> None:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    scenario = suite.get("clinic-s11-check-balance")
    voice = SpeechRenderer("piper:joe")
    result = run_call(
        scenario,
        ScriptedCaller(asr=asr),
        # fixed arguments: this checks the caller's listening; the listening agent's audio
        # case (Whisper tiny mishears IDs) is measured in docs/live-calls.md
        ScriptedAgent(listen=False),
        ToolRuntime(scenario, suite.tools),
        mode="audio",
        caller_voice=voice,
        agent_voice=voice,
        seed=1,
    )
    assert result.end_reason == "user_end_call", result.error
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    assert turn_taking(record).ran
    heard = [s.transcript for s in result.timeline.speech("assistant") if s.transcript]
    assert heard and all(len(t.split()) > 2 for t in heard)  # the caller really listened


def _last_user(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m["role"] == "user")


def responder(path: str, body: Any) -> FakeResponse:
    """Plays both sides: the caller (system prompt of the LLM caller) and the agent."""
    messages = body["messages"]
    if messages[0]["content"].startswith("You are role-playing"):
        heard = _last_user(messages) - 1  # agent turns heard so far
        if heard == 1:
            return chat_text("My member ID is K X 4 and I was born on May first, 1980.")
        if heard == 2:
            return chat_text("Yes, please book Friday.")
        return chat_tool_call("end_call", {"reason": "done"})
    last = messages[-1]
    if last["role"] == "tool":
        result = json.loads(last["content"])
        if result.get("status") == "verified":
            return chat_text("Thank you, you are verified. Shall I book Friday?")
        return chat_text("Your visit is booked for Friday. Is there anything else?")
    turn = _last_user(messages)
    if turn == 1:
        return chat_text("Sure. What is your member ID and date of birth?")
    if turn == 2:
        return chat_tool_call(
            "verify_member", {"member_id": "KX4", "date_of_birth": "1980-05-01"}, "call_a"
        )
    if turn == 3:
        return chat_tool_call("book_visit", {"day": "friday"}, "call_b")
    return chat_text("Goodbye.")


@pytest.mark.slow
def test_llm_caller_and_cascade_agent_hold_a_spoken_call(tmp_path: Path, asr: Any) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    with FakeOpenAIServer(responder) as server:
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        voice = SpeechRenderer("piper:joe")
        agent = CascadeAgent(llm=llm, asr=asr, tts=voice)
        caller = LLMCaller(llm=llm, asr=asr)
        result = run_call(
            scenario,
            caller,
            agent,
            ToolRuntime(scenario, suite.tools),
            mode="audio",
            caller_voice=voice,
            agent_voice=voice,
            # fixed delays: measured compute time would make the timeline depend on machine load
            latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=800)),
        )
        requests = list(server.requests)
    assert result.end_reason == "user_end_call", result.error
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    assert turn_taking(record).ran
    agent_requests = [
        r for r in requests if r.body["messages"][0]["content"].startswith("Your role")
    ]
    assert {t["function"]["name"] for t in agent_requests[0].body["tools"]} == {
        "verify_member",
        "book_visit",
    }
    # the agent heard the caller through Whisper: its transcript reached the LLM
    first_user = next(m for m in agent_requests[0].body["messages"] if m["role"] == "user")
    assert "book" in first_user["content"].lower()
    user_turns = result.timeline.speech("user")
    assert any("member" in s.transcript.lower() for s in user_turns), [
        (s.intended_text, s.transcript) for s in user_turns
    ]
    assert result.user_track is not None and result.user_track.duration > 5
