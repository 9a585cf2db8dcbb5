"""Both websocket bridge versions take their common settings through ``BridgeEndpoint``."""

from __future__ import annotations

import pytest

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
