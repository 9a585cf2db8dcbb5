"""A client for OpenAI-Realtime-compatible speech-to-speech endpoints (websocket), with
voxeval's turn handling (``turn_detection: none``; the system and its options are in
``voxeval.systems.live.realtime_system``, server-side turn detection in ``realtime_vad``).

Per caller turn the caller's audio is appended to the input buffer as base64 PCM16 at 24 kHz,
committed, and a response is requested (server-side turn detection is off: voxeval's detector
decides turn ends, so every system is judged with the same rule). Function calls are executed on
the scenario database and their outputs sent back before the model continues. Latency is the
time from the response request to the first audio delta. Runs on the wall clock.

    systems:
      - {name: rt, type: openai-realtime, model: gpt-realtime,
         url: wss://api.openai.com/v1/realtime, api_key_env: OPENAI_API_KEY, voice: marin}
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections import deque
from typing import Any, TypedDict

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.systems.call import AgentTurn, CallAgentBase
from voxeval.systems.call_prompts import agent_system_prompt
from voxeval.systems.live.pcm16 import audio_to_pcm16, pcm16_to_audio

RATE = 24000
RECEIVED = "_voxeval_received"  # arrival time (time.monotonic) of an event read ahead
AUDIO_DELTAS = ("response.audio.delta", "response.output_audio.delta")
TEXT_DELTAS = (
    "response.audio_transcript.delta",
    "response.output_audio_transcript.delta",
    "response.text.delta",
    "response.output_text.delta",
)


class RealtimeSettings(TypedDict, total=False):
    """``RealtimeAgent``'s keyword arguments (what a subclass passes through)."""

    model: str
    url: str
    api_key_env: str | None
    voice: str
    beta_header: bool
    max_tool_rounds: int
    turn_timeout_s: float


class RealtimeAgent(CallAgentBase):
    """One call's session with a Realtime endpoint."""

    name = "openai-realtime"
    clock = "wall"
    reports_latency = True

    def __init__(
        self,
        *,
        model: str = "gpt-realtime",
        url: str = "wss://api.openai.com/v1/realtime",
        api_key_env: str | None = "OPENAI_API_KEY",
        voice: str = "marin",
        beta_header: bool = True,
        max_tool_rounds: int = 8,
        turn_timeout_s: float = 60.0,
    ) -> None:
        self.url = url if "model=" in url else f"{url}{'&' if '?' in url else '?'}model={model}"
        self.model, self.voice = model, voice
        self.headers: dict[str, str] = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            local = "127.0.0.1" in url or "localhost" in url
            if not key and not local:
                raise ProviderUnavailable(
                    f"agent openai-realtime: environment variable {api_key_env} is not set"
                )
            if key:
                self.headers["Authorization"] = f"Bearer {key}"
        if beta_header:
            self.headers["OpenAI-Beta"] = "realtime=v1"
        self.max_tool_rounds, self.turn_timeout_s = max_tool_rounds, turn_timeout_s
        self._ws: Any = None
        self._tools: ToolRuntime | None = None
        self._inbox: deque[dict[str, Any]] = deque()  # events read ahead, not yet handled
        self.last_message_item: str | None = None  # id of the agent's latest spoken item
        self._updates_sent = self._updates_seen = 0  # session.update / session.updated

    def _turn_detection(self) -> JSONObject | None:
        """The session's ``turn_detection``: off, voxeval decides turn ends."""
        return None

    def _send(self, **event: JSONValue) -> None:
        if event.get("type") == "session.update":
            self._updates_sent += 1
        self._ws.send(json.dumps(event))

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        from websockets.sync.client import connect

        self._tools = tools
        try:
            # Entered by hand (closed in close()): websockets >= 17.1 deprecates using a bare
            # connect() result; __enter__ gives the same connection on every version.
            self._ws = connect(
                self.url, additional_headers=self.headers, max_size=2**24
            ).__enter__()
        except Exception as exc:
            raise EndpointError(
                f"agent openai-realtime: cannot connect to {self.url} ({exc})"
            ) from exc
        functions = tools.realtime_tool_schemas()
        self._send(
            type="session.update",
            session={
                "instructions": agent_system_prompt(scenario, hears_text=False),
                "voice": self.voice,
                "modalities": ["audio", "text"],
                "input_audio_format": "pcm16",
                "output_audio_format": "pcm16",
                "turn_detection": self._turn_detection(),
                "tools": functions,
                "tool_choice": "auto",
            },
        )
        if not scenario.agent.greeting:
            return None
        self._send(
            type="response.create",
            response={"instructions": f"Greet the caller with exactly: {scenario.agent.greeting}"},
        )
        return self._collect(time.monotonic())

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        if self._ws is None:
            raise ConfigError("agent openai-realtime: respond() called before start()")
        if user_audio is not None:
            raw = audio_to_pcm16(user_audio, RATE)
            step = RATE // 50 * 2  # 20 ms frames
            for i in range(0, len(raw), step):
                self._send(
                    type="input_audio_buffer.append",
                    audio=base64.b64encode(raw[i : i + step]).decode("ascii"),
                )
            self._send(type="input_audio_buffer.commit")
        else:
            self._send(
                type="conversation.item.create",
                item={
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": user_text or ""}],
                },
            )
        asked = time.monotonic()
        self._send(type="response.create")
        return self._collect(asked)

    def _collect(self, asked: float) -> AgentTurn:
        pcm = bytearray()
        texts: list[str] = []
        records: list[ToolCallRecord] = []
        offsets: list[float] = []  # when each call ran, from the same origin as the latency
        first_audio: list[float] = []  # arrival time of the first audio delta
        for _ in range(self.max_tool_rounds + 1):
            calls = self._read_response(pcm, texts, first_audio)
            if not calls:
                break
            assert self._tools is not None
            for call in calls:
                offsets.append(max(0.0, time.monotonic() - asked))
                name, arguments = call["name"], call.get("arguments") or "{}"
                if not isinstance(arguments, str | dict):
                    # not an object: the runtime refuses it as invalid parameters (JSON text)
                    arguments = json.dumps(arguments)
                record = self._tools.call(str(name), arguments)
                records.append(record)
                self._send(
                    type="conversation.item.create",
                    item={
                        "type": "function_call_output",
                        "call_id": call.get("call_id"),
                        "output": json.dumps(record.result, default=str),
                    },
                )
            self._send(type="response.create")
        latency = (first_audio[0] if first_audio else time.monotonic()) - asked
        audio = pcm16_to_audio(bytes(pcm), RATE, "<realtime>") if pcm else None
        text = "".join(texts).strip() or None
        return AgentTurn(
            text=text,
            audio=audio,
            tool_calls=tuple(records),
            compute_s=latency,
            tool_offsets_s=tuple(offsets),
        )

    def _read_response(
        self, pcm: bytearray, texts: list[str], first_audio: list[float]
    ) -> list[JSONObject]:
        """Events until ``response.done``; returns the function calls it asked for."""
        calls: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.turn_timeout_s
        while True:
            try:
                event = self._next_event(deadline)
            except TimeoutError:
                return calls
            kind = event.get("type", "")
            if kind in AUDIO_DELTAS:
                if not first_audio:  # when it arrived, if it was read ahead
                    received = event.get(RECEIVED, time.monotonic())
                    assert isinstance(received, int | float)  # a time.monotonic() stamp
                    first_audio.append(float(received))
                delta = event.get("delta", "")
                pcm += base64.b64decode(delta if isinstance(delta, str) else "")
            elif kind in TEXT_DELTAS:
                texts.append(str(event.get("delta", "")))
            elif kind == "response.output_item.done":
                # The finished item always names the function; the older beta reference's
                # response.function_call_arguments.done event has no "name".
                item = _object(event.get("item"))
                if item.get("type") == "function_call":
                    calls.append(item)
                elif item.get("type") == "message" and item.get("id"):
                    self.last_message_item = str(item["id"])
            elif kind == "error":
                if not _harmless(event):
                    raise EndpointError(f"agent openai-realtime: {self.url}: {_message(event)}")
            elif kind == "response.done":
                response = _object(event.get("response"))
                if response.get("status") == "failed":  # e.g. quota or rate limits
                    error = _object(_object(response.get("status_details")).get("error"))
                    reason = error.get("message") or error.get("code") or "no details"
                    raise EndpointError(f"agent openai-realtime: response failed: {reason}")
                return calls

    def _next_event(self, deadline: float) -> JSONObject:
        """The next server event: one read ahead first, else from the socket (TimeoutError
        once ``deadline``, a ``time.monotonic()`` value, has passed)."""
        if self._inbox:
            return self._inbox.popleft()
        raw = self._ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        event: dict[str, Any] = json.loads(raw)
        if event.get("type") == "session.updated":
            self._updates_seen += 1
        return event

    def close(self) -> None:
        if self._ws is not None:
            try:
                self._ws.close()
            finally:
                self._ws = None


def _object(value: JSONValue | None) -> JSONObject:
    """A field that should hold an object, as one ({} when absent or of another type)."""
    return value if isinstance(value, dict) else {}


def _message(event: JSONObject) -> str:
    return str(_object(event.get("error")).get("message") or json.dumps(event))


def _harmless(event: JSONObject) -> bool:
    """An ``error`` that changes nothing: cancelling a response that had already finished
    (clients cancel on every barge-in; the service answers this when nothing was running)."""
    return _object(event.get("error")).get("code") == "response_cancel_not_active"
