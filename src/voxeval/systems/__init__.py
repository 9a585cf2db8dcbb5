"""Systems under test (turn systems and call agents); importing this package registers the
built-in systems."""

from voxeval.systems.base import (
    CALL,
    REPLY,
    Reply,
    SystemBase,
    SystemContext,
    Turn,
    TurnSystem,
    capabilities_of,
)
from voxeval.systems.call import AgentTurn, CallAgent, CallAgentBase, StreamingCallAgent
from voxeval.systems.cascade import (
    TINY_BASELINE_LABEL,
    CascadeAgent,
    CascadeOptions,
    CascadeSystem,
)
from voxeval.systems.factory import (
    build_system,
    missing_capability,
    open_call,
    removed_spelling,
    system_class,
)
from voxeval.systems.http_system import HTTPOptions, HTTPSystem, HTTPSystemError
from voxeval.systems.hybrid import HybridAgent, HybridOptions, HybridSystem
from voxeval.systems.live.phone_stream import (
    PhoneStreamAgent,
    PhoneStreamOptions,
    PhoneStreamSystem,
)
from voxeval.systems.live.pipecat_system import PipecatAgent, PipecatOptions, PipecatSystem
from voxeval.systems.live.realtime_system import RealtimeOptions, RealtimeSystem
from voxeval.systems.live.realtime_vad import ServerVadRealtimeAgent
from voxeval.systems.live.realtime_ws import RealtimeAgent
from voxeval.systems.live.webrtc_system import WebRTCAgent, WebRTCOptions, WebRTCSystem
from voxeval.systems.live.ws_bridge import (
    WebsocketBridgeAgent,
    WebsocketBridgeOptions,
    WebsocketBridgeSystem,
)
from voxeval.systems.live.ws_bridge_v2 import StreamingBridgeAgent
from voxeval.systems.openai_audio import OpenAIAudioOptions, OpenAIAudioSystem
from voxeval.systems.replay import MissingReply, ReplayOptions, ReplaySystem
from voxeval.systems.scripted import ScriptedAgent, ScriptedOptions, ScriptedSystem
from voxeval.systems.turn_call import TurnSystemCall

__all__ = [
    "CALL",
    "REPLY",
    "TINY_BASELINE_LABEL",
    "AgentTurn",
    "CallAgent",
    "CallAgentBase",
    "CascadeAgent",
    "CascadeOptions",
    "CascadeSystem",
    "HTTPOptions",
    "HTTPSystem",
    "HTTPSystemError",
    "HybridAgent",
    "HybridOptions",
    "HybridSystem",
    "MissingReply",
    "OpenAIAudioOptions",
    "OpenAIAudioSystem",
    "PhoneStreamAgent",
    "PhoneStreamOptions",
    "PhoneStreamSystem",
    "PipecatAgent",
    "PipecatOptions",
    "PipecatSystem",
    "RealtimeAgent",
    "RealtimeOptions",
    "RealtimeSystem",
    "ReplayOptions",
    "ReplaySystem",
    "Reply",
    "ScriptedAgent",
    "ScriptedOptions",
    "ScriptedSystem",
    "ServerVadRealtimeAgent",
    "StreamingBridgeAgent",
    "StreamingCallAgent",
    "SystemBase",
    "SystemContext",
    "Turn",
    "TurnSystem",
    "TurnSystemCall",
    "WebRTCAgent",
    "WebRTCOptions",
    "WebRTCSystem",
    "WebsocketBridgeAgent",
    "WebsocketBridgeOptions",
    "WebsocketBridgeSystem",
    "build_system",
    "capabilities_of",
    "missing_capability",
    "open_call",
    "removed_spelling",
    "system_class",
]
