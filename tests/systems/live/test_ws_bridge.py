"""An external turn-based agent (examples/ws_agent_client.py, started as its own process) holds
a call through the websocket bridge."""

import sys
from pathlib import Path

from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.live.ws_bridge import WebsocketBridgeAgent

CLIENT = Path(__file__).resolve().parents[3] / "examples" / "ws_agent_client.py"


def test_reference_client_completes_a_call(tmp_path: Path) -> None:
    suite_path = write_suite(tmp_path / "suite")
    suite = load_scenario_suite(suite_path)
    scenario = suite.scenarios[0]
    tools = ToolRuntime(scenario, suite.tools)
    agent = WebsocketBridgeAgent(
        command=(
            f"{sys.executable} {CLIENT} --url {{url}} --suite {suite_path} --turn-handling voxeval"
        ),
        connect_timeout_s=60,
    )
    result = run_call(scenario, ScriptedCaller(), agent, tools, mode="text")
    assert result.error is None and result.end_reason == "user_end_call"
    said = [s.intended_text for s in result.timeline.speech("assistant")]
    assert said[0] == "Hello, clinic line, how can I help you?"
    assert said[-1] == "Your visit is booked for Friday. Goodbye."
    assert [t.name for t in result.timeline.tools] == ["verify_member", "book_visit"]
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    assert agent._process is None  # the agent process was stopped with the call


def test_bridge_reports_a_missing_agent(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    agent = WebsocketBridgeAgent(connect_timeout_s=0.5)
    result = run_call(
        scenario, ScriptedCaller(), agent, ToolRuntime(scenario, suite.tools), mode="text"
    )
    assert result.end_reason == "agent_error"  # the system under test failed
    assert result.system_fault is not None
    assert result.error is not None and "no agent connected" in result.error
