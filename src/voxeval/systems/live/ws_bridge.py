"""A generic websocket bridge: any external agent that speaks a small JSON protocol can hold
a call (protocol: docs/websocket-bridge.md; reference client: examples/ws_agent_client.py).

Version 2 of the protocol, with the turn handling chosen by the system option
``turn_handling``; the agent opens with ``hello {protocol_version: 2}`` either way:

* ``agent`` (the default; ``voxeval.systems.live.ws_bridge_v2``): the agent hears the whole line
  continuously and decides itself when to speak, yield and hang up.
* ``voxeval`` (turn-based, ``WebsocketBridgeAgent`` below): per caller turn voxeval sends the
  caller's speech as 20 ms PCM16 frames (text in text-only mode) and ``input.end``; the agent
  answers with one turn (``agent.speech_start`` .. ``agent.speech_end``), calling tools with
  ``tool_call``. voxeval's turn handling decides when the caller finished and when the agent
  is cut off.

Version 2 is the only version: version 1 (the turn-based exchange without the ``hello``) was
removed after voxeval 0.1. A config asking for it is refused by the plan check, and an agent
that opens with anything but a version-2 ``hello`` ends its call as its own fault; both errors
point to docs/websocket-bridge.md, "Moving from version 1".

    systems:
      - {name: ext, type: websocket, protocol_version: 2, command: "python my_agent.py --url {url}"}
      - {name: turns, type: websocket, protocol_version: 2, turn_handling: voxeval, command: ...}
"""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from voxeval.audio import Audio
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.config import SystemSpec
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SYSTEMS, SystemBase
from voxeval.systems.call import AgentTurn
from voxeval.systems.live.pcm16 import pcm16_frames
from voxeval.systems.live.ws_bridge_server import (
    AUDIO_RATE,
    MOVING_FROM_V1,
    PROTOCOL_VERSION,
    BridgeEndpoint,
    BridgeError,
)
from voxeval.systems.live.ws_bridge_v2 import StreamingBridgeAgent
from voxeval.systems.options import parse_options

if TYPE_CHECKING:
    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime

__all__ = ["BridgeError", "WebsocketBridgeAgent", "WebsocketBridgeOptions", "WebsocketBridgeSystem"]

FRAME_MS = 20


class WebsocketBridgeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    command: str | None = None  # "{url}" is replaced by the bridge's address
    protocol_version: Literal[2] = 2  # the only version (see the module notes)
    # who decides when the caller finished and when the agent yields: the agent (None, the
    # default), or voxeval's turn handling (turn-based agents)
    turn_handling: Literal["agent", "voxeval"] | None = None
    realtime: bool = False  # stream frames in real time (wall clock) instead of at once
    # the scenario tools also over MCP and HTTP for the agent's own backend; session.start
    # then carries tool_service {token, mcp_url, openapi_url, http_base} (docs/mcp-tools.md)
    serve_tools: bool = False
    connect_timeout_s: float = Field(default=30.0, gt=0)
    turn_timeout_s: float = Field(default=60.0, gt=0)

    @field_validator("protocol_version", mode="before")
    @classmethod
    def _only_version_2(cls, value: object) -> object:
        if value != PROTOCOL_VERSION:  # before the Literal check: say how to move
            raise PydanticCustomError(  # not a ValueError: no "Value error," before the text
                "unsupported_version",
                f"version {value!r} is not supported, only {PROTOCOL_VERSION}; version 1 was "
                "removed after voxeval 0.1: write 'protocol_version: 2' with 'turn_handling: "
                f"voxeval' and have the agent open with a hello ({MOVING_FROM_V1})",
            )
        return value

    @property
    def turn_based(self) -> bool:
        return self.turn_handling == "voxeval"


@SYSTEMS.register("websocket")
class WebsocketBridgeSystem(SystemBase):
    """Holds live calls only; each call runs its own bridge server (``WebsocketBridgeAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: WebsocketBridgeOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(
        cls, spec: SystemSpec, ctx: ProviderSource | None = None
    ) -> WebsocketBridgeSystem:
        return cls(spec.name, parse_options(spec, WebsocketBridgeOptions))

    def identity(self) -> JSONObject:
        identity: dict[str, Any] = {
            "type": "websocket",
            "command": self.options.command,
            "protocol_version": self.options.protocol_version,
        }
        if self.options.turn_based:
            identity["turn_handling"] = "voxeval"
        return identity

    def open_call(self) -> WebsocketBridgeAgent | StreamingBridgeAgent:
        options = self.options.model_dump()
        options.pop("protocol_version")
        options.pop("turn_handling")
        if not self.options.turn_based:
            return StreamingBridgeAgent(**options)
        return WebsocketBridgeAgent(**options)


class WebsocketBridgeAgent(BridgeEndpoint):
    """One call's turn-based bridge (``turn_handling: voxeval``): the agent opens with
    ``hello``, then answers one turn per ``input.end``."""

    name = "websocket"
    reports_latency = True  # latency = input.end -> agent.speech_start, measured here

    # ------------------------------------------------------------------ CallAgent
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._open_session(
            scenario,
            tools,
            turn_fields={"turn_handling": "voxeval"},
            audio_fields={"frame_ms": FRAME_MS},
        )
        return self._collect_turn(time.monotonic())

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        self._audio_mode = user_audio is not None
        if user_audio is not None:
            for frame in pcm16_frames(user_audio, AUDIO_RATE, FRAME_MS):
                self._send({"type": "audio", "data": frame})
                if self.realtime:
                    time.sleep(FRAME_MS / 1000)
        else:
            self._send({"type": "text", "text": user_text or ""})
        self._send({"type": "input.end"})
        turn = self._collect_turn(time.monotonic())
        return turn or AgentTurn(text=None, compute_s=self.turn_timeout_s)

    def _collect_turn(self, t_input_end: float) -> AgentTurn | None:
        """Read one agent turn; None when the agent says it is listening instead."""
        deadline = time.monotonic() + self.turn_timeout_s
        texts: list[str] = []
        pcm = bytearray()
        records: list[ToolCallRecord] = []
        started: float | None = None
        end_call = False
        while True:
            message = self._recv(deadline)
            if message is None:
                return AgentTurn(text=None, compute_s=self.turn_timeout_s)
            kind = message["type"]
            if kind == "agent.listening" and started is None and not records:
                return None
            if kind == "agent.speech_start":
                started = time.monotonic() if started is None else started
            elif kind == "audio":
                started = time.monotonic() if started is None else started
                pcm += base64.b64decode(str(message.get("data", "")))
            elif kind == "text":
                texts.append(str(message.get("text", "")))
            elif kind == "tool_call":
                records.append(self._run_tool(message))
            elif kind in ("agent.speech_end", "call.end"):
                end_call = kind == "call.end"
                break
            else:
                raise BridgeError(f"websocket bridge: unexpected message type {kind!r}")
        latency = (started if started is not None else time.monotonic()) - t_input_end
        return self._agent_turn(texts, pcm, records, end_call=end_call, compute_s=max(0.0, latency))
