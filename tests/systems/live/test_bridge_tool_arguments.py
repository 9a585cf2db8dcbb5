"""A bridged agent whose tool call carries arguments that are not an object gets the tool's
refusal (invalid parameters) back over the socket, like any other malformed call, instead of
the bridge failing on our side."""

import json
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.systems.live.ws_bridge_server import BridgeEndpoint


@pytest.mark.parametrize("arguments", [[1, 2], 7, True])
def test_non_object_arguments_are_refused_as_invalid_parameters(
    tmp_path: Path, arguments: object
) -> None:
    suite_path = write_suite(tmp_path / "suite")
    suite = load_scenario_suite(suite_path)
    scenario = suite.scenarios[0]
    bridge = BridgeEndpoint(host="127.0.0.1", port=0, command=None, connect_timeout_s=10)
    url = bridge.listen()
    with connect(url) as agent:
        bridge._connect()
        bridge._tools = ToolRuntime(scenario, suite.tools)
        record = bridge._run_tool(
            {"type": "tool_call", "id": "c1", "name": "verify_member", "arguments": arguments}
        )
        answer = json.loads(agent.recv(timeout=10))
    bridge._done.set()
    assert record.name == "verify_member"
    assert not record.valid
    assert record.error is not None and "JSON object" in record.error
    assert answer["type"] == "tool_result" and answer["id"] == "c1"
    assert answer["error"] == record.error
