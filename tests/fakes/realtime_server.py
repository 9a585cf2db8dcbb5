"""A scripted OpenAI-Realtime-compatible websocket server on 127.0.0.1 for tests.

It speaks the part of the Realtime protocol a voice-agent client needs: ``session.created`` on
connect, ``session.update``, ``input_audio_buffer.append`` (base64 PCM16) / ``commit``,
``conversation.item.create`` (user text, ``function_call_output``), ``response.create``. Each
``response.create`` plays the next scripted response: function calls and/or speech, streamed
as the real service streams them (``response.output_item.added``, argument and transcript
deltas, ``response.audio.delta`` chunks of PCM16 at 24 kHz, ``response.done`` with the output
items); ``Fail`` ends a response with ``status: failed``. ``ga_events=True`` uses the GA event
names (``response.output_audio.delta`` ...); ``call_names_in_done=False`` leaves ``name`` out of
``response.function_call_arguments.done``, as the older beta reference did.

A turn that calls a tool is two responses: the call, then (after the client sent the output)
the spoken answer.

Server VAD. While the session's ``turn_detection`` is ``{"type": "server_vad", ...}`` (the
service's default) every appended chunk goes through ``EnergyVAD``, a level detector on 20 ms
frames of what was received: it sends ``input_audio_buffer.speech_started`` (``audio_start_ms``
= the detection point minus ``prefix_padding_ms``) and, after ``silence_duration_ms`` of
silence, ``speech_stopped`` (``audio_end_ms`` = the detection point), commits the speech
(``committed``, ``conversation.item.created``) and, unless ``create_response`` is false, plays
the next scripted response. ``response.cancel`` is recorded (``cancels``; as the service does,
an ``error`` with code ``response_cancel_not_active`` comes back when no response is running,
which is always the case here: responses are played at once). ``conversation.item.truncate``
is checked against the item's audio, recorded (``truncations``) and cuts the item's transcript
to the words whose audio was played (``transcripts``), answered by ``conversation.item.truncated``.

    with FakeRealtimeServer(voice=my_tts) as server:
        server.push([Say("Hello, how can I help?")])                        # greeting
        server.push([CallTool("lookup", {"id": "A1"})], [Say("Found it. Goodbye.")])
        agent = RealtimeAgent(url=server.url, ...)
        ...
        server.wait_closed()
        assert server.tool_outputs["call_1"] == {...}
        assert server.problems == []

Everything the client sent is recorded (``events``, ``headers``, ``paths``, ``committed_audio``
per commit, ``tool_outputs`` by call id); protocol misuse that the real service would reject
or mishandle lands in ``problems`` (and, where the service answers with an ``error`` event,
one is sent).
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soxr

from voxeval.audio import Audio

RATE = 24000  # the Realtime API's pcm16 format: 24 kHz, mono, little-endian
MIN_COMMIT_MS = 100  # the service rejects commits of less audio than this


@dataclass(frozen=True)
class Say:
    """Speech: audio deltas from the server's voice plus transcript deltas of ``text``."""

    text: str


@dataclass(frozen=True)
class CallTool:
    """A function call item; the client must send a ``function_call_output`` for it."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Fail:
    """The response ends with ``status: failed`` (how the service reports quota errors)."""

    code: str
    message: str


Output = Say | CallTool | Fail
Voice = Callable[[str], Audio]


def tone_voice(text: str) -> Audio:
    """A stand-in voice: 0.25 s of a modulated 200 Hz tone per word."""
    words = max(1, len(text.split()))
    t = np.arange(int(words * 0.25 * RATE)) / RATE
    envelope = 0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)
    return Audio((0.3 * envelope * np.sin(2 * np.pi * 200 * t)).astype(np.float32), RATE)


@dataclass
class Connection:
    path: str
    headers: dict[str, str]


@dataclass
class _Session:
    """Per-connection protocol state."""

    turn_detection: Any = field(default_factory=lambda: {"type": "server_vad"})
    tools: list[dict[str, Any]] = field(default_factory=list)
    buffer: bytearray = field(default_factory=bytearray)
    awaiting: dict[str, str] = field(default_factory=dict)  # call_id -> function name
    heard: bytearray = field(default_factory=bytearray)  # all audio appended (server VAD)
    vad: EnergyVAD | None = None
    speech_item: str | None = None  # the user item the detected speech will become
    speech_from: int = 0  # its audio_start_ms
    audio_ms: dict[str, int] = field(default_factory=dict)  # assistant item -> audio length


class EnergyVAD:
    """The fake's turn detector: a 20 ms frame is voiced when its RMS level exceeds
    ``-60 + 50 * threshold`` dBFS (0.5: -35 dBFS); speech starts once ``min_speech_ms`` of
    voiced frames ran in a row and stops after ``silence_duration_ms`` of unvoiced ones.
    ``feed`` returns the decisions as (event, detection point in ms of received audio)."""

    FRAME = RATE // 50

    def __init__(self, threshold: float, silence_duration_ms: int, min_speech_ms: int = 60) -> None:
        self.level_db = -60.0 + 50.0 * threshold
        self.start_frames = max(1, -(-min_speech_ms // 20))
        self.stop_frames = max(1, -(-silence_duration_ms // 20))
        self.rest = b""
        self.frames = 0  # frames processed
        self.speaking = False
        self.run = 0  # voiced (while quiet) or unvoiced (while speaking) frames in a row

    def feed(self, pcm: bytes) -> list[tuple[str, int]]:
        data = self.rest + pcm
        size = 2 * self.FRAME
        whole = len(data) // size * size
        self.rest = data[whole:]
        decisions: list[tuple[str, int]] = []
        for i in range(0, whole, size):
            samples = np.frombuffer(data[i : i + size], "<i2").astype(np.float64) / 32768
            level = 10 * np.log10(max(float(np.mean(samples**2)), 1e-12))
            voiced = level > self.level_db
            self.frames += 1
            self.run = self.run + 1 if voiced != self.speaking else 0
            if not self.speaking and self.run >= self.start_frames:
                self.speaking, self.run = True, 0
                decisions.append(("speech_started", self.frames * 20))
            elif self.speaking and self.run >= self.stop_frames:
                self.speaking, self.run = False, 0
                decisions.append(("speech_stopped", self.frames * 20))
        return decisions


class FakeRealtimeServer:
    def __init__(
        self,
        voice: Voice | None = None,
        *,
        ga_events: bool = False,
        call_names_in_done: bool = True,
        chunk_ms: int = 100,
    ) -> None:
        self.voice = voice or tone_voice
        self.ga_events = ga_events
        self.call_names_in_done = call_names_in_done
        self.chunk_bytes = RATE * chunk_ms // 1000 * 2
        self.script: deque[Sequence[Output]] = deque()
        self.connections: list[Connection] = []
        self.events: list[dict[str, Any]] = []  # every client event, in order
        self.committed_audio: list[bytes] = []  # the PCM16 of each committed buffer
        self.tool_outputs: dict[str, Any] = {}  # call_id -> parsed output
        self.spoken: list[str] = []  # texts the server has spoken
        self.problems: list[str] = []
        self.detections: list[tuple[str, int]] = []  # server VAD: (event, ms of audio)
        self.cancels = 0  # response.cancel received
        self.truncations: list[dict[str, Any]] = []  # conversation.item.truncate received
        self.transcripts: dict[str, str] = {}  # assistant item -> transcript (after cuts)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._server: Any = None

    # ------------------------------------------------------------------ test API
    def push(self, *responses: Sequence[Output]) -> None:
        """Queue responses; each is the list of output items of one ``response.create``."""
        with self._lock:
            self.script.extend(list(r) for r in responses)

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/v1/realtime"

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    def wait_closed(self, timeout: float = 5.0) -> bool:
        """Wait until the last client connection has been fully handled."""
        return self._closed.wait(timeout)

    def start(self) -> FakeRealtimeServer:
        from websockets.sync.server import serve

        self._server = serve(self._handle, "127.0.0.1", 0, max_size=2**24)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def __enter__(self) -> FakeRealtimeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ protocol
    def _handle(self, ws: Any) -> None:
        self._closed.clear()
        request = ws.request
        self.connections.append(Connection(request.path, dict(request.headers.raw_items())))
        session = _Session()

        def send(kind: str, **fields: Any) -> None:
            ws.send(json.dumps({"type": kind, "event_id": f"event_{next(self._ids)}", **fields}))

        send("session.created", session={"id": "sess_fake", "object": "realtime.session"})
        try:
            for raw in ws:
                event = json.loads(raw)
                self.events.append(event)
                self._dispatch(event, session, send)
        except Exception as exc:  # a broken connection or a bug in the fake: fail the test
            self.problems.append(f"server error: {type(exc).__name__}: {exc}")
        finally:
            self._closed.set()

    def _dispatch(self, event: dict[str, Any], session: _Session, send: Any) -> None:
        kind = event.get("type")
        if kind == "session.update":
            update = event.get("session") or {}
            if "turn_detection" in update:
                session.turn_detection = update["turn_detection"]
                session.vad = None
            session.tools = list(update.get("tools") or session.tools)
            send("session.updated", session=update)
        elif kind == "input_audio_buffer.append":
            chunk = base64.b64decode(event.get("audio", ""), validate=True)
            if len(chunk) % 2:
                self.problems.append("input_audio_buffer.append: odd number of PCM16 bytes")
            session.buffer += chunk
            if (session.turn_detection or {}).get("type") == "server_vad":
                self._detect(chunk, session, send)
        elif kind == "input_audio_buffer.commit":
            if len(session.buffer) < RATE * MIN_COMMIT_MS // 1000 * 2:
                send(
                    "error",
                    error={
                        "type": "invalid_request_error",
                        "code": "input_audio_buffer_commit_empty",
                        "message": f"buffer too small: {len(session.buffer)} bytes",
                    },
                )
                return
            self.committed_audio.append(bytes(session.buffer))
            session.buffer.clear()
            item_id = f"item_{next(self._ids)}"
            send("input_audio_buffer.committed", item_id=item_id, previous_item_id=None)
            send("conversation.item.created", item={"id": item_id, "type": "message"})
        elif kind == "conversation.item.create":
            item = event.get("item") or {}
            if item.get("type") == "function_call_output":
                call_id = str(item.get("call_id"))
                if call_id not in session.awaiting:
                    self.problems.append(f"function_call_output for unknown call {call_id!r}")
                session.awaiting.pop(call_id, None)
                self.tool_outputs[call_id] = json.loads(item.get("output") or "null")
            send("conversation.item.created", item={"id": f"item_{next(self._ids)}", **item})
        elif kind == "response.create":
            if session.awaiting:
                self.problems.append(
                    f"response.create before the outputs of {sorted(session.awaiting.values())}"
                )
            with self._lock:
                outputs = self.script.popleft() if self.script else None
            if outputs is None:
                send("error", error={"type": "server_error", "message": "no scripted response"})
                return
            self._respond(outputs, session, send)
        elif kind == "response.cancel":
            self.cancels += 1
            send(
                "error",
                error={
                    "type": "invalid_request_error",
                    "code": "response_cancel_not_active",
                    "message": "Cancellation failed: no active response found",
                },
            )
        elif kind == "conversation.item.truncate":
            self._truncate(event, session, send)
        else:
            self.problems.append(f"unexpected client event {kind!r}")

    def _detect(self, chunk: bytes, session: _Session, send: Any) -> None:
        """Server VAD on a received chunk: detection events, commits, automatic responses."""
        config = session.turn_detection
        if session.vad is None:
            session.vad = EnergyVAD(
                float(config.get("threshold", 0.5)), int(config.get("silence_duration_ms", 500))
            )
            session.heard = bytearray()
        session.heard += chunk
        padding = int(config.get("prefix_padding_ms", 300))
        for kind, at_ms in session.vad.feed(chunk):
            self.detections.append((kind, at_ms))
            if kind == "speech_started":
                session.speech_item = f"item_{next(self._ids)}"
                session.speech_from = max(0, at_ms - padding)
                send(
                    "input_audio_buffer.speech_started",
                    audio_start_ms=session.speech_from,
                    item_id=session.speech_item,
                )
                continue
            item_id = session.speech_item or f"item_{next(self._ids)}"
            send("input_audio_buffer.speech_stopped", audio_end_ms=at_ms, item_id=item_id)
            start, end = (RATE * ms // 1000 * 2 for ms in (session.speech_from, at_ms))
            self.committed_audio.append(bytes(session.heard[start:end]))
            session.buffer.clear()
            send("input_audio_buffer.committed", item_id=item_id, previous_item_id=None)
            send("conversation.item.created", item={"id": item_id, "type": "message"})
            if config.get("create_response", True):
                with self._lock:
                    outputs = self.script.popleft() if self.script else None
                if outputs is None:
                    self.problems.append(f"no scripted response for the turn ending at {at_ms} ms")
                    continue
                self._respond(outputs, session, send)

    def _truncate(self, event: dict[str, Any], session: _Session, send: Any) -> None:
        item_id = str(event.get("item_id"))
        played = int(event.get("audio_end_ms", -1))
        self.truncations.append(dict(event))
        length = session.audio_ms.get(item_id)
        if length is None or not 0 <= played <= length or event.get("content_index") != 0:
            self.problems.append(f"bad truncate {event!r} (item audio: {length} ms)")
            send("error", error={"type": "invalid_request_error", "message": "bad truncate"})
            return
        words = self.transcripts[item_id].split()
        self.transcripts[item_id] = " ".join(words[: len(words) * played // max(1, length)])
        send("conversation.item.truncated", item_id=item_id, content_index=0, audio_end_ms=played)

    def _respond(self, outputs: Sequence[Output], session: _Session, send: Any) -> None:
        audio_delta = "response.output_audio.delta" if self.ga_events else "response.audio.delta"
        text_delta = (
            "response.output_audio_transcript.delta"
            if self.ga_events
            else "response.audio_transcript.delta"
        )
        response_id = f"resp_{next(self._ids)}"
        send("response.created", response={"id": response_id, "status": "in_progress"})
        items: list[dict[str, Any]] = []
        failure = next((out for out in outputs if isinstance(out, Fail)), None)
        if failure is not None:
            details = {
                "type": "failed",
                "error": {"code": failure.code, "message": failure.message},
            }
            send(
                "response.done",
                response={"id": response_id, "status": "failed", "status_details": details},
            )
            return
        for index, out in enumerate(outputs):
            item_id = f"item_{next(self._ids)}"
            where = {"response_id": response_id, "item_id": item_id, "output_index": index}
            item: dict[str, Any]
            if isinstance(out, CallTool):
                known = {t.get("name") for t in session.tools}
                if out.name not in known:
                    self.problems.append(f"scripted call {out.name!r} is not a session tool")
                call_id = f"call_{next(self._ids)}"
                arguments = json.dumps(out.arguments)
                item = {
                    "id": item_id,
                    "type": "function_call",
                    "call_id": call_id,
                    "name": out.name,
                    "arguments": arguments,
                }
                send("response.output_item.added", **where, item={**item, "arguments": ""})
                half = len(arguments) // 2
                for piece in (arguments[:half], arguments[half:]):
                    send("response.function_call_arguments.delta", **where, delta=piece)
                named = {"name": out.name} if self.call_names_in_done else {}
                send(
                    "response.function_call_arguments.done",
                    **where,
                    call_id=call_id,
                    arguments=arguments,
                    **named,
                )
                session.awaiting[call_id] = out.name
            elif isinstance(out, Say):
                pcm = _pcm16(self.voice(out.text))
                item = {
                    "id": item_id,
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "audio", "transcript": out.text}],
                }
                send("response.output_item.added", **where, item={**item, "content": []})
                words = out.text.split(" ")
                chunks = [
                    pcm[i : i + self.chunk_bytes] for i in range(0, len(pcm), self.chunk_bytes)
                ]
                for n in range(max(len(words), len(chunks))):
                    if n < len(words):
                        delta = words[n] if n == 0 else " " + words[n]
                        send(text_delta, **where, content_index=0, delta=delta)
                    if n < len(chunks):
                        data = base64.b64encode(chunks[n]).decode("ascii")
                        send(audio_delta, **where, content_index=0, delta=data)
                self.spoken.append(out.text)
                session.audio_ms[item_id] = len(pcm) // 2 * 1000 // RATE
                self.transcripts[item_id] = out.text
            send("response.output_item.done", **where, item=item)
            items.append(item)
        send(
            "response.done",
            response={"id": response_id, "status": "completed", "output": items},
        )


def _pcm16(audio: Audio) -> bytes:
    samples = audio.samples
    if audio.rate != RATE:
        samples = soxr.resample(samples, audio.rate, RATE)
    return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
