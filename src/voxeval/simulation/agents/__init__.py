"""Agents that can hold a call; importing this package registers them."""

from voxeval.simulation.agents.cascade_agent import CascadeAgent
from voxeval.simulation.agents.hybrid_agent import HybridAgent
from voxeval.simulation.agents.realtime_ws import RealtimeAgent
from voxeval.simulation.agents.ws_bridge import WebsocketBridgeAgent

__all__ = ["CascadeAgent", "HybridAgent", "RealtimeAgent", "WebsocketBridgeAgent"]
