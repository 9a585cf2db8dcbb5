"""Websocket bridge protocol version 2: the external agent hears the whole line and decides
itself when to speak, yield and hang up (a ``StreamingCallAgent``; docs/websocket-bridge.md).

Handshake: the agent's first message is ``hello`` with ``protocol_version: 2``; voxeval
answers ``session.start`` (or ``error``/``unsupported_version`` and the call fails).

Line: each block of caller-line frames the engine hands over goes to the agent as one
``line`` message (``seq``, ``start_frame``, ``frames``, ``frame_ms``, ``t`` on the call clock,
base64 PCM16 ``data`` or null for digital silence; in text mode ``speech`` flags and
``words``). On the virtual clock the agent answers every block with exactly one of ``tick``
(took it all in), ``response.start``/``stop``/``end_call`` naming the frame after which it
acts; time stands still meanwhile, so calls are deterministic. On the wall clock the frames go
out one by one in real time and the agent's actions apply at the last frame sent.

A response is everything from ``response.start`` to ``response.end``: audio chunks, ``text``,
``tool_call`` (answered with ``tool_result``). ``transcript`` messages (what the agent heard
of the caller, with times) may come at any point.
"""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING, Any, Unpack

from voxeval.audio import Audio
from voxeval.audio.pcm16 import audio_to_pcm16
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.json_types import JSONObject, JSONValue
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    HeardSpeech,
    LineBlock,
    Reply,
    StopSpeaking,
)
from voxeval.systems.live.ws_bridge_server import (
    AUDIO_RATE,
    BridgeEndpoint,
    BridgeError,
    BridgeSettings,
)

if TYPE_CHECKING:
    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime

ACTIONS = ("response.start", "stop", "end_call")


class StreamingBridgeAgent(BridgeEndpoint):
    """One call's bridge speaking protocol 2."""

    name = "websocket"
    streaming = True
    # Virtual clock: the agent's compute is what it reports (``latency_s``), never our wall
    # time; wall clock: the time from ``response.start`` to its first audio or text.
    reports_latency = True

    def __init__(self, **settings: Unpack[BridgeSettings]) -> None:
        super().__init__(**settings)
        self._seq = 0
        self._heard: list[HeardSpeech] = []
        self._wall_t0 = 0.0
        self._replied_at = -1  # frame of the latest response.start

    # ---------------------------------------------------------------- handshake
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._open_session(scenario, tools, turn_fields={}, audio_fields={})
        opening = self._expect(time.monotonic() + self.turn_timeout_s, "response.start or listen")
        # Wall clock: frames go out in real time from here on (the agent's connection and
        # start-up are not the caller's time); the engine's later waits are then no-ops.
        self._wall_t0 = time.monotonic()
        if opening["type"] == "listen":
            return None
        if opening["type"] != "response.start":
            raise self._unexpected(opening, "response.start or listen")
        return self._response(opening)

    # ---------------------------------------------------------------- the line
    def hear(self, block: LineBlock) -> AgentAction | None:
        self._audio_mode = block.speech is None
        if self.clock == "wall":
            return self._hear_in_real_time(block)
        self._seq += 1
        self._send(self._line_message(block, 0, block.frames))
        message = self._expect(time.monotonic() + self.turn_timeout_s, "tick or an action")
        if message["type"] == "tick":
            if message.get("seq") != self._seq:
                raise BridgeError(
                    f"websocket bridge: tick for seq {message.get('seq')!r}, expected {self._seq}"
                )
            return None
        if message["type"] not in ACTIONS:
            raise self._unexpected(message, "tick, " + ", ".join(ACTIONS))
        frame = message.get("frame")
        last = block.start + block.frames - 1
        if not isinstance(frame, int) or not block.start <= frame <= last:
            raise BridgeError(
                f"websocket bridge: {message['type']} needs 'frame' within "
                f"{block.start}..{last} (the block just sent), got {frame!r}"
            )
        return self._action(message, frame)

    def _hear_in_real_time(self, block: LineBlock) -> AgentAction | None:
        """Send the block frame by frame at its time on the wall clock; the agent's first
        action applies after the last frame sent."""
        for i in range(block.frames):
            frame = block.start + i
            due = self._wall_t0 + frame * block.frame_s
            self._seq += 1
            self._send(self._line_message(block, i, 1))
            deadline = max(due + block.frame_s, time.monotonic())
            while True:
                message = self._recv(deadline)
                if message is None:
                    break
                if message["type"] == "transcript":
                    self._keep_transcript(message)
                elif message["type"] == "stop" and _frame(message) < self._replied_at:
                    continue  # meant for a response that has ended since
                elif message["type"] != "tick":
                    return self._action(message, frame)
        return None

    def _line_message(self, block: LineBlock, first: int, count: int) -> JSONObject:
        start = block.start + first
        message: dict[str, Any] = {
            "type": "line",
            "seq": self._seq,
            "start_frame": start,
            "frames": count,
            "frame_ms": block.frame_s * 1000,
            "t": round(start * block.frame_s, 6),
            "agent_speaking": block.playing,
        }
        if block.speech is not None:  # text mode: who talks in which frame, and the words
            flags = block.speech[first : first + count]
            message["speech"] = "".join("1" if f else "0" for f in flags)
            message["words"] = {
                str(k): w for k, w in block.words.items() if start <= k < start + count
            }
        elif block.samples is None:
            message["data"] = None
        else:
            samples = block.samples[first * block.frame_len : (first + count) * block.frame_len]
            raw = audio_to_pcm16(Audio(samples, block.rate), AUDIO_RATE)
            message["data"] = base64.b64encode(raw).decode("ascii")
        return message

    def _action(self, message: JSONObject, frame: int) -> AgentAction:
        kind = message["type"]
        if kind == "response.start":
            self._replied_at = frame
            return Reply(frame, lambda: self._response(message))
        if kind == "stop":
            return StopSpeaking(frame)
        if kind == "end_call":
            return Reply(frame, lambda: AgentTurn(text=None, end_call=True))
        raise self._unexpected(message, "tick, response.start, stop or end_call")

    # ---------------------------------------------------------------- responses
    def _response(self, opened: JSONObject) -> AgentTurn:
        """Read one response, from its ``response.start`` to ``response.end``."""
        began = time.monotonic()
        deadline = began + self.turn_timeout_s
        first_output: float | None = None
        texts: list[str] = []
        pcm = bytearray()
        records: list[ToolCallRecord] = []
        offsets: list[float | None] = []
        while True:
            message = self._expect(deadline, "response.end")
            kind = message["type"]
            if kind == "audio":
                first_output = first_output or time.monotonic()
                pcm += base64.b64decode(str(message.get("data") or ""))
            elif kind == "text":
                first_output = first_output or time.monotonic()
                texts.append(str(message.get("text", "")))
            elif kind == "tool_call":
                records.append(self._run_tool(message))
                at = message.get("t")
                offsets.append(float(at) if isinstance(at, int | float) else None)
            elif kind == "response.end":
                break
            else:
                raise self._unexpected(message, "audio, text, tool_call, transcript, response.end")
        if self.clock == "virtual":
            latency = _seconds(opened.get("latency_s"), "response.start latency_s")
            reported = tuple(o if o is not None else latency for o in offsets)
        else:
            latency = (first_output or time.monotonic()) - began
            reported = tuple(o for o in offsets if o is not None)
        return self._agent_turn(  # tool calls served out of band: their times are observed
            texts,
            pcm,
            records,
            end_call=bool(message.get("end_call", False)),
            compute_s=latency,
            tool_offsets_s=reported if len(reported) == len(records) else None,
        )

    # ---------------------------------------------------------------- messages
    def _expect(self, deadline: float, what: str) -> JSONObject:
        """The agent's next message other than a transcript (those are kept)."""
        while True:
            message = self._recv(deadline)
            if message is None:
                raise TimeoutError(
                    f"websocket bridge: no {what} from the agent within {self.turn_timeout_s:g} s"
                )
            if message["type"] != "transcript":
                return message
            self._keep_transcript(message)

    def _keep_transcript(self, message: JSONObject) -> None:
        self._heard.append(
            HeardSpeech(
                str(message.get("text", "")),
                _seconds(message.get("start"), "transcript start"),
                _seconds(message.get("end"), "transcript end"),
            )
        )

    def _recv(self, deadline: float) -> JSONObject | None:
        message = super()._recv(deadline)
        if message is not None and message["type"] == "error":
            raise BridgeError(f"websocket bridge: the agent reported an error: {message}")
        return message

    def _unexpected(self, message: JSONObject, wanted: str) -> BridgeError:
        return BridgeError(
            f"websocket bridge: unexpected message type {message['type']!r} (wanted {wanted})"
        )

    def take_transcripts(self) -> list[HeardSpeech]:
        heard, self._heard = self._heard, []
        return heard

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """Tell the agent how much of its last response reached the caller."""
        self._send({"type": "response.played", "text": text, "spoken_fraction": spoken_fraction})


def _frame(message: JSONObject) -> int:
    frame = message.get("frame")
    return frame if isinstance(frame, int) else -1


def _seconds(value: JSONValue, field: str) -> float:
    if value is None:
        return 0.0
    if not isinstance(value, int | float) or value < 0:
        raise BridgeError(f"websocket bridge: {field} must be seconds >= 0, got {value!r}")
    return float(value)
