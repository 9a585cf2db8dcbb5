"""The websocket bridge's version 1 is folded into version 2 (issue 41, point 4): a turn-based
agent opens with ``hello {protocol_version: 2}`` and, with ``turn_handling: voxeval``, gets
the turn-based exchange; version 1 (no hello) still works for one version, with a note."""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path

import pytest

from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems import build_system, open_call
from voxeval.systems.live.ws_bridge import WebsocketBridgeAgent
from voxeval.systems.live.ws_bridge_v2 import StreamingBridgeAgent

CLIENT = Path(__file__).resolve().parents[3] / "examples" / "ws_agent_client.py"


def bridge(suite_path: Path, client_args: str, **options: object) -> WebsocketBridgeAgent:
    command = f"{sys.executable} {CLIENT} --url {{url}} --suite {suite_path} {client_args}"
    spec = SystemSpec(
        name="ext", type="websocket", command=command, connect_timeout_s=60, **options
    )
    session = open_call(build_system(spec))
    assert isinstance(session, WebsocketBridgeAgent)
    return session


def test_a_turn_based_agent_holds_a_call_on_version_2(tmp_path: Path) -> None:
    suite_path = write_suite(tmp_path / "suite")
    suite = load_scenario_suite(suite_path)
    scenario = suite.scenarios[0]
    agent = bridge(
        suite_path,
        "--protocol 2 --turn-handling voxeval",
        protocol_version=2,
        turn_handling="voxeval",
    )
    assert agent.handshake
    result = run_call(
        scenario, ScriptedCaller(), agent, ToolRuntime(scenario, suite.tools), mode="text"
    )
    assert result.error is None and result.end_reason == "user_end_call"
    said = [s.intended_text for s in result.timeline.speech("assistant")]
    assert said[-1] == "Your visit is booked for Friday. Goodbye."
    assert [t.name for t in result.timeline.tools] == ["verify_member", "book_visit"]
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0


def test_a_version_1_agent_on_the_version_2_turn_bridge_is_told_why(tmp_path: Path) -> None:
    from websockets.sync.client import connect

    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    agent = WebsocketBridgeAgent(handshake=True, connect_timeout_s=1.0)
    url = agent.listen()

    def version_1_agent() -> None:  # waits for session.start without a hello
        with contextlib.suppress(Exception), connect(url) as ws:
            ws.recv(timeout=10)

    thread = threading.Thread(target=version_1_agent, daemon=True)
    thread.start()
    result = run_call(
        scenario, ScriptedCaller(), agent, ToolRuntime(scenario, suite.tools), mode="text"
    )
    thread.join(10)
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert result.error is not None and "sent no hello within 1 s" in result.error
    assert "set protocol_version: 1" in result.error


def test_options_choose_the_session() -> None:
    def session(**options: object) -> object:
        return open_call(build_system(SystemSpec(name="ext", type="websocket", **options)))

    assert isinstance(session(protocol_version=2), StreamingBridgeAgent)
    turn_based = session(protocol_version=2, turn_handling="voxeval")
    assert isinstance(turn_based, WebsocketBridgeAgent) and turn_based.handshake
    legacy = session()
    assert isinstance(legacy, WebsocketBridgeAgent) and not legacy.handshake
    with pytest.raises(ConfigError, match="turn_handling"):
        session(protocol_version=1, turn_handling="agent")
    identity = build_system(
        SystemSpec(name="ext", type="websocket", protocol_version=2, turn_handling="voxeval")
    ).identity()
    assert identity == {
        "type": "websocket",
        "command": None,
        "protocol_version": 2,
        "turn_handling": "voxeval",
    }
