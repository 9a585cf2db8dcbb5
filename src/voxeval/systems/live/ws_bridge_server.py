"""The server end shared by both turn handlings of the websocket bridge (docs/websocket-bridge.md).

voxeval listens on a websocket; the external agent connects (voxeval may start it with a
command where ``{url}`` is replaced by the server address). Every message is one JSON object
with a ``type``; a broken message or a lost connection is the agent's fault (``BridgeError``).
"""

from __future__ import annotations

import contextlib
import json
import queue
import shlex
import subprocess
import threading
import time
from typing import TYPE_CHECKING, TypedDict

from voxeval.audio.pcm16 import pcm16_to_audio
from voxeval.errors import ConfigError, VoxevalError
from voxeval.json_types import JSONObject, JSONValue
from voxeval.systems.call import AgentTurn, CallAgentBase

if TYPE_CHECKING:
    from websockets.sync.server import Server, ServerConnection

    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord
    from voxeval.systems.tool_service import ToolGrant

AUDIO_RATE = 16000
PROTOCOL_VERSION = 2
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)  # version 1 was removed after voxeval 0.1
HELLO = '{"type": "hello", "protocol_version": 2}'
# What the author of a version-1 agent reads to move it (config and agent changes).
MOVING_FROM_V1 = "docs/websocket-bridge.md, 'Moving from version 1'"


def missing_hello(what_happened: str) -> str:
    """The error for an agent that did not open with a hello: most likely a version-1 agent,
    which waits for ``session.start`` without a word."""
    return (
        f"websocket bridge: {what_happened}; every agent opens with {HELLO} (a version-1 "
        f"agent? version 1 was removed after voxeval 0.1: {MOVING_FROM_V1})"
    )


class BridgeError(VoxevalError):
    """The external agent broke the bridge protocol or went away."""


class BridgeSettings(TypedDict, total=False):
    """The settings every bridge endpoint takes (``BridgeEndpoint``'s keyword arguments)."""

    host: str
    port: int
    command: str | None
    realtime: bool
    serve_tools: bool
    connect_timeout_s: float
    turn_timeout_s: float


class BridgeEndpoint(CallAgentBase):
    """One call's websocket server and its single agent connection."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        command: str | None = None,
        realtime: bool = False,
        serve_tools: bool = False,
        connect_timeout_s: float = 30.0,
        turn_timeout_s: float = 60.0,
    ) -> None:
        self.host, self.port, self.command = host, port, command
        self.connect_timeout_s = connect_timeout_s
        self.turn_timeout_s = turn_timeout_s
        self.realtime = realtime
        self.clock = "wall" if realtime else "virtual"
        # text-only calls get no audio back (set per caller turn / line block)
        self._audio_mode = True
        self._connections: queue.Queue[ServerConnection] = queue.Queue()
        self._done = threading.Event()
        self._server: Server | None = None
        self._conn: ServerConnection | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._tools: ToolRuntime | None = None  # the scenario's tools, set when a call starts
        # opt-in: the tools also over MCP/HTTP for the agent's own backend (docs/mcp-tools.md)
        self.serve_tools = serve_tools
        self._grant: ToolGrant | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise BridgeError("websocket bridge: server not started")
        port = self._server.socket.getsockname()[1]
        return f"ws://{self.host}:{port}"

    def _handler(self, connection: ServerConnection) -> None:
        self._connections.put(connection)
        self._done.wait()  # the connection stays open until the call ends

    def listen(self) -> str:
        """Start the server (idempotent) and return its URL."""
        if self._server is None:
            from websockets.sync.server import serve

            self._server = serve(self._handler, self.host, self.port, max_size=2**24)
            threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self.url

    def _connect(self) -> None:
        """Start the agent's command (if any) and wait for its connection."""
        url = self.listen()
        if self.command:
            args = shlex.split(self.command.replace("{url}", url))
            self._process = subprocess.Popen(args)
        try:
            self._conn = self._connections.get(timeout=self.connect_timeout_s)
        except queue.Empty as exc:
            raise BridgeError(
                f"websocket bridge: no agent connected to {url} within {self.connect_timeout_s} s"
            ) from exc

    def _open_session(
        self,
        scenario: Scenario,
        tools: ToolRuntime,
        *,
        turn_fields: JSONObject,
        audio_fields: JSONObject,
    ) -> None:
        """Connect the agent, take its hello and send ``session.start``: the same call setup
        for both turn handlings; ``turn_fields`` follow the version, ``audio_fields`` extend
        the audio format."""
        self._tools = tools
        self._connect()
        self._receive_hello()
        self._send(
            {
                "type": "session.start",
                "protocol_version": PROTOCOL_VERSION,
                **turn_fields,
                "clock": self.clock,
                "scenario_id": scenario.id,
                "current_date_time": scenario.current_date_time,
                "role": scenario.agent.role,
                "instructions": scenario.agent.instructions,
                "greeting": scenario.agent.greeting,
                "tools": [*tools.tool_schemas()],
                "audio_format": {
                    "encoding": "pcm16",
                    "sample_rate": AUDIO_RATE,
                    "channels": 1,
                    **audio_fields,
                },
                **self._tool_service(tools, scenario.id),
            }
        )

    def _agent_turn(
        self,
        texts: list[str],
        pcm: bytearray,
        records: list[ToolCallRecord],
        *,
        end_call: bool,
        compute_s: float,
        tool_offsets_s: tuple[float, ...] | None = None,
    ) -> AgentTurn:
        """One agent turn from what a response carried: its text parts joined, its PCM as
        audio (in audio mode), its tool calls then those served over MCP/HTTP meanwhile."""
        records = records + self._served_tool_calls()
        text = " ".join(t for t in texts if t).strip()
        audio = pcm16_to_audio(bytes(pcm), AUDIO_RATE, "<ws agent>") if pcm else None
        return AgentTurn(
            text=text or None,
            audio=audio if self._audio_mode else None,
            tool_calls=tuple(records),
            end_call=end_call,
            compute_s=compute_s,
            tool_offsets_s=tool_offsets_s,
        )

    def _tool_service(self, tools: ToolRuntime, scenario_id: str) -> JSONObject:
        """``session.start``'s ``tool_service`` field when ``serve_tools`` is on: the call's
        token and addresses of its tools over MCP and HTTP."""
        if not self.serve_tools:
            return {}
        from voxeval.systems.tool_service import shared_tool_service

        self._grant = shared_tool_service().register(tools, scenario_id)
        g = self._grant
        return {
            "tool_service": {
                "token": g.token,
                "mcp_url": g.mcp_url,
                "openapi_url": g.openapi_url,
                "http_base": g.http_base,
            }
        }

    def _served_tool_calls(self) -> list[ToolCallRecord]:
        """Tool calls the agent made over MCP/HTTP since the last ask (attached to its turn)."""
        if self._grant is None:
            return []
        from voxeval.systems.tool_service import shared_tool_service

        return shared_tool_service().records_since(self._grant.token)

    def _run_tool(self, message: JSONObject) -> ToolCallRecord:
        """Run the scenario tool a ``tool_call`` message names and answer ``tool_result``
        (both protocol versions use the same messages)."""
        if self._tools is None:
            raise ConfigError("websocket bridge: tool call before the session started")
        arguments = message.get("arguments")
        if not (arguments is None or isinstance(arguments, dict | str)):
            # not an object: the runtime refuses it as invalid parameters (JSON text)
            arguments = json.dumps(arguments)
        record = self._tools.call(str(message.get("name", "")), arguments)
        self._send(
            {
                "type": "tool_result",
                "id": message.get("id"),
                "result": record.result,
                "error": record.error,
            }
        )
        return record

    def _send(self, message: JSONObject) -> None:
        if self._conn is None:
            raise BridgeError("websocket bridge: no agent connected")
        try:
            self._conn.send(json.dumps(message))
        except Exception as exc:
            raise BridgeError(f"websocket bridge: the agent connection closed ({exc})") from exc

    def _recv(self, deadline: float) -> JSONObject | None:
        """The agent's next message, or None when ``deadline`` (monotonic) passes first."""
        assert self._conn is not None
        remaining = max(0.0, deadline - time.monotonic())  # 0: only what already arrived
        try:
            raw = self._conn.recv(timeout=remaining)
        except TimeoutError:
            return None
        except Exception as exc:
            raise BridgeError(f"websocket bridge: the agent connection closed ({exc})") from exc
        try:
            message = json.loads(raw)
        except (TypeError, json.JSONDecodeError) as exc:
            raise BridgeError(f"websocket bridge: agent sent invalid JSON ({exc})") from exc
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise BridgeError(f"websocket bridge: message without a 'type': {raw!r:.200}")
        return message

    def _receive_hello(self) -> None:
        """The agent's first message must be ``hello`` naming version 2; anything else ends
        the call as the agent's fault, with what to change."""
        hello = self._recv(time.monotonic() + self.connect_timeout_s)
        if hello is None:
            raise BridgeError(
                missing_hello(f"the agent sent no hello within {self.connect_timeout_s:g} s")
            )
        if hello["type"] != "hello":
            raise BridgeError(
                missing_hello(f"the agent's first message was {hello['type']!r}, not hello")
            )
        if hello.get("protocol_version") != PROTOCOL_VERSION:
            raise self._refuse_version(hello.get("protocol_version"))

    def _refuse_version(self, offered: JSONValue) -> BridgeError:
        """Tell the agent its protocol version is not the one this bridge speaks."""
        if offered == 1:
            why = f"version 1 was removed after voxeval 0.1 ({MOVING_FROM_V1})"
        else:
            why = f"voxeval supports {list(SUPPORTED_VERSIONS)}"
        message = (
            f"websocket bridge: the agent asked for protocol_version {offered!r}; this bridge "
            f"speaks version {PROTOCOL_VERSION} ({why})"
        )
        with contextlib.suppress(BridgeError):  # the agent may be gone; the error says why
            self._send(
                {
                    "type": "error",
                    "code": "unsupported_version",
                    "message": message,
                    "protocol_version": PROTOCOL_VERSION,
                    "supported_versions": list(SUPPORTED_VERSIONS),
                }
            )
        return BridgeError(message)

    def close(self) -> None:
        """End the session: tell the agent, close the connection, stop server and process."""
        if self._conn is not None:
            try:
                self._send({"type": "call.end"})
                self._conn.close()
            except Exception:  # the agent may already be gone; closing is best effort
                pass
            self._conn = None
        self._done.set()
        if self._grant is not None:  # the call's database is final from here
            from voxeval.systems.tool_service import shared_tool_service

            shared_tool_service().revoke(self._grant.token)
            self._grant = None
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._process is not None:
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
