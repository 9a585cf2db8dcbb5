"""Both websocket bridge versions take their common settings through ``BridgeEndpoint``."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.systems.live.ws_bridge import WebsocketBridgeAgent
from voxeval.systems.live.ws_bridge_v2 import StreamingBridgeAgent


@pytest.mark.parametrize("agent_class", [WebsocketBridgeAgent, StreamingBridgeAgent])
def test_common_settings_and_their_defaults(
    agent_class: type[WebsocketBridgeAgent] | type[StreamingBridgeAgent],
) -> None:
    default = agent_class()
    assert (default.host, default.port, default.command) == ("127.0.0.1", 0, None)
    assert (default.clock, default.serve_tools) == ("virtual", False)
    assert (default.connect_timeout_s, default.turn_timeout_s) == (30.0, 60.0)
    wall = agent_class(realtime=True, serve_tools=True, turn_timeout_s=5.0, port=9)
    assert (wall.clock, wall.serve_tools, wall.turn_timeout_s, wall.port) == (
        "wall",
        True,
        5.0,
        9,
    )


def test_version_1_keeps_its_realtime_flag_and_handshake() -> None:
    agent = WebsocketBridgeAgent(realtime=True, handshake=True)
    assert agent.realtime is True and agent.handshake is True
    assert WebsocketBridgeAgent().realtime is False


def test_session_start_carries_the_call_setup_in_its_order(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    tools = ToolRuntime(scenario, suite.tools)
    agent = StreamingBridgeAgent(connect_timeout_s=10)
    received: list[dict[str, Any]] = []

    def client() -> None:
        with connect(agent.listen()) as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": 2}))
            received.append(json.loads(ws.recv()))
            ws.send(json.dumps({"type": "listen"}))
            for _ in ws:  # until voxeval closes
                pass

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    try:
        assert agent.start(scenario, tools) is None
    finally:
        agent.close()
    thread.join(5)
    [start] = received
    assert list(start) == [
        "type",
        "protocol_version",
        "clock",
        "scenario_id",
        "current_date_time",
        "role",
        "instructions",
        "greeting",
        "tools",
        "audio_format",
    ]
    assert start["scenario_id"] == scenario.id and start["greeting"] == scenario.agent.greeting
    assert start["audio_format"] == {"encoding": "pcm16", "sample_rate": 16000, "channels": 1}
    assert start["tools"] == json.loads(json.dumps([*tools.tool_schemas()]))
