"""The websocket bridge has one version (issue 41, point 4): a turn-based agent opens with
``hello {protocol_version: 2}`` and, with ``turn_handling: voxeval``, gets the turn-based
exchange. Version 1 is removed: a config asking for it is refused before any call, and a
version-1 agent (no hello) ends its call as its own fault; both point to the docs' "Moving from
version 1"."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.runner.test_plan_check import live_call_config, write
from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.cli.main import app
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


MOVING = "docs/websocket-bridge.md, 'Moving from version 1'"


@pytest.mark.parametrize("turn_handling", ["voxeval", "agent"])
@pytest.mark.parametrize("opening", [None, "agent.listening"])
def test_a_version_1_agent_is_told_how_to_move(
    tmp_path: Path, turn_handling: str, opening: str | None
) -> None:
    """A version-1 agent waits for session.start without a hello (or, broken, speaks first):
    the call ends as the agent's failure, and the error says where the move is described."""
    from websockets.sync.client import connect

    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    spec = SystemSpec(
        name="ext", type="websocket", turn_handling=turn_handling, connect_timeout_s=1.0
    )
    agent = open_call(build_system(spec))
    assert isinstance(agent, WebsocketBridgeAgent | StreamingBridgeAgent)
    url = agent.listen()

    def version_1_agent() -> None:
        with contextlib.suppress(Exception), connect(url) as ws:
            if opening is not None:
                ws.send(json.dumps({"type": opening}))
            ws.recv(timeout=10)

    thread = threading.Thread(target=version_1_agent, daemon=True)
    thread.start()
    result = run_call(
        scenario, ScriptedCaller(), agent, ToolRuntime(scenario, suite.tools), mode="text"
    )
    thread.join(10)
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert result.error is not None and MOVING in result.error
    if opening is None:
        assert "the agent sent no hello within 1 s" in result.error
    else:
        assert "the agent's first message was 'agent.listening', not hello" in result.error


def test_options_choose_the_session() -> None:
    def session(**options: object) -> object:
        return open_call(build_system(SystemSpec(name="ext", type="websocket", **options)))

    assert isinstance(session(), StreamingBridgeAgent)
    assert isinstance(session(protocol_version=2), StreamingBridgeAgent)
    assert isinstance(session(protocol_version=2, turn_handling="voxeval"), WebsocketBridgeAgent)
    assert isinstance(session(turn_handling="voxeval"), WebsocketBridgeAgent)
    for version in (1, 3):
        with pytest.raises(ConfigError, match=r"protocol_version: .*only 2") as refused:
            session(protocol_version=version)
        assert MOVING in str(refused.value)
    identity = build_system(
        SystemSpec(name="ext", type="websocket", protocol_version=2, turn_handling="voxeval")
    ).identity()
    assert identity == {
        "type": "websocket",
        "command": None,
        "protocol_version": 2,
        "turn_handling": "voxeval",
    }


def test_validate_and_run_refuse_version_1_naming_the_file_system_and_field(
    tmp_path: Path,
) -> None:
    config = live_call_config(tmp_path)
    config["systems"] = [{"name": "ext", "type": "websocket", "protocol_version": 1}]
    path = write(tmp_path, config)
    for command in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "run")]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, result.output
        output = " ".join(result.output.split())  # the console wraps long lines
        assert f"{path}: systems.0 (ext): system 'ext' (type websocket): protocol_version:" in (
            output
        )
        assert "write 'protocol_version: 2' with 'turn_handling: voxeval'" in output
        assert MOVING in output
    assert not (tmp_path / "run").exists()  # refused before any call
