"""A generic websocket bridge: any external agent that speaks a small JSON protocol can hold
a call (protocol: docs/websocket-bridge.md; reference client: examples/ws_agent_client.py).

voxeval runs the websocket server; the agent connects (optionally voxeval starts it with
``command``, where ``{url}`` is replaced by the server address). Per caller turn voxeval sends
the caller's speech as 20 ms PCM16 frames (text in text-only mode) and ``input.end``; the agent
answers with one turn (``agent.speech_start`` .. ``agent.speech_end``), calling tools with
``tool_call`` messages that voxeval executes on the scenario database.

    systems:
      - {name: ext, type: websocket, command: "python my_agent.py --url {url}"}
"""

from __future__ import annotations

import base64
import json
import queue
import shlex
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, VoxevalError
from voxeval.registry import register
from voxeval.systems.base import CALL
from voxeval.systems.call import AgentTurn
from voxeval.systems.options import parse_options
from voxeval.systems.pcm16 import pcm16_frames, pcm16_to_audio

if TYPE_CHECKING:
    from websockets.sync.server import Server, ServerConnection

    from voxeval.benchmarks.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime

AUDIO_RATE = 16000
FRAME_MS = 20


class BridgeError(VoxevalError):
    """The external agent broke the bridge protocol or went away."""


class WebsocketBridgeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    command: str | None = None  # "{url}" is replaced by the bridge's address
    realtime: bool = False  # stream frames in real time (wall clock) instead of at once
    connect_timeout_s: float = Field(default=30.0, gt=0)
    turn_timeout_s: float = Field(default=60.0, gt=0)


@register("system", "websocket")
class WebsocketBridgeSystem:
    """Holds live calls only; each call runs its own bridge server (``WebsocketBridgeAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: WebsocketBridgeOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> WebsocketBridgeSystem:
        return cls(spec.name, parse_options(spec, WebsocketBridgeOptions))

    def identity(self) -> dict[str, Any]:
        return {"type": "websocket", "command": self.options.command}

    def open_call(self) -> WebsocketBridgeAgent:
        return WebsocketBridgeAgent(**self.options.model_dump())


class WebsocketBridgeAgent:
    """One call's bridge: a websocket server the external agent connects to."""

    name = "websocket"
    reports_latency = True  # latency = input.end -> agent.speech_start, measured here

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        command: str | None = None,
        realtime: bool = False,
        connect_timeout_s: float = 30.0,
        turn_timeout_s: float = 60.0,
    ) -> None:
        self.host, self.port, self.command = host, port, command
        self.realtime = realtime
        self.clock = "wall" if realtime else "virtual"
        self.connect_timeout_s, self.turn_timeout_s = connect_timeout_s, turn_timeout_s
        self._connections: queue.Queue[ServerConnection] = queue.Queue()
        self._done = threading.Event()
        self._server: Server | None = None
        self._conn: ServerConnection | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._tools: ToolRuntime | None = None
        self._audio_mode = True

    # ------------------------------------------------------------------ connection
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

    def _send(self, message: dict[str, Any]) -> None:
        if self._conn is None:
            raise BridgeError("websocket bridge: no agent connected")
        self._conn.send(json.dumps(message))

    def _recv(self, deadline: float) -> dict[str, Any] | None:
        assert self._conn is not None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
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

    # ------------------------------------------------------------------ CallAgent
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
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
        self._send(
            {
                "type": "session.start",
                "scenario_id": scenario.id,
                "current_date_time": scenario.current_date_time,
                "role": scenario.agent.role,
                "instructions": scenario.agent.instructions,
                "greeting": scenario.agent.greeting,
                "tools": tools.tool_schemas(),
                "audio_format": {
                    "encoding": "pcm16",
                    "sample_rate": AUDIO_RATE,
                    "channels": 1,
                    "frame_ms": FRAME_MS,
                },
            }
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
        text = " ".join(t for t in texts if t).strip()
        audio = pcm16_to_audio(bytes(pcm), AUDIO_RATE, "<ws agent>") if pcm else None
        return AgentTurn(
            text=text or None,
            audio=audio if self._audio_mode else None,
            tool_calls=tuple(records),
            end_call=end_call,
            compute_s=max(0.0, latency),
        )

    def _run_tool(self, message: dict[str, Any]) -> ToolCallRecord:
        if self._tools is None:
            raise ConfigError("websocket bridge: tool call before the session started")
        record = self._tools.call(str(message.get("name", "")), message.get("arguments"))
        self._send(
            {
                "type": "tool_result",
                "id": message.get("id"),
                "result": record.result,
                "error": record.error,
            }
        )
        return record

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
