"""The telephone network's end of a phone-line media stream (docs/phone-streams.md).

voxeval connects to the agent's websocket as a telephony provider does and speaks the Twilio
Media Streams message set: ``connected``, ``start`` (``streamSid``, ``callSid``, media format,
``customParameters``), ``media`` (base64 G.711 mu-law at 8 kHz, one 20 ms frame of 160 bytes
each, numbered ``chunk`` with a millisecond ``timestamp``), ``mark`` echoes and ``stop``. From
the agent it takes ``media`` (its speech), ``mark`` (echo once played) and ``clear`` (drop what
is buffered). Every JSON message is one object with an ``event``; anything else is a protocol
error, and so is a connection that drops without a normal close: both are the agent's fault.

This module is only the transport (connection, messages, audio coding, arrival times), so
other ways of reaching an agent can reuse it; ``voxeval.systems.live.phone_stream`` puts it in a
call.
"""

from __future__ import annotations

import base64
import json
import queue
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.audio.g711 import RATE, SILENCE, float_to_mulaw, mulaw_to_audio
from voxeval.errors import VoxevalError
from voxeval.json_types import JSONObject

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

FRAME_MS = 20
FRAME_BYTES = RATE * FRAME_MS // 1000  # 160 mu-law bytes per 20 ms
NORMAL_CLOSE = (1000, 1001)  # the agent hung up (a clean close ends the stream)


class StreamError(VoxevalError):
    """The agent broke the media-stream protocol or dropped the connection."""


@dataclass(frozen=True)
class Incoming:
    """One message from the agent with its arrival time (monotonic seconds). ``event`` is
    ``media`` (``audio`` set, 8 kHz), ``mark`` (``name``), ``clear``, or ``closed`` (the
    agent closed the stream normally)."""

    event: str
    at: float
    audio: Audio | None = None
    name: str = ""


class ResampledStream:
    """Streaming sample-rate conversion (soxr keeps state between chunks, so 20 ms pieces
    join without clicks)."""

    def __init__(self, rate_in: int, rate_out: int) -> None:
        import soxr

        self._stream = soxr.ResampleStream(rate_in, rate_out, 1, dtype="float32")

    def __call__(
        self, samples: npt.NDArray[np.float32], last: bool = False
    ) -> npt.NDArray[np.float32]:
        out: npt.NDArray[np.float32] = self._stream.resample_chunk(samples.astype(np.float32), last)
        return out


class MediaStream:
    """One call's stream toward the agent's websocket ``url``."""

    def __init__(self, url: str, *, connect_timeout_s: float = 15.0) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self.stream_sid = "MZ" + secrets.token_hex(16)
        self.call_sid = "CA" + secrets.token_hex(16)
        self.account_sid = "AC" + "0" * 32  # no provider account behind a simulated call
        self._conn: ClientConnection | None = None
        self._incoming: queue.Queue[Incoming | BaseException] = queue.Queue()
        self._sequence = 0
        self._chunk = 0
        self._down: tuple[int, ResampledStream] | None = None  # line rate, its converter
        self._pending = np.zeros(0, np.float32)  # 8 kHz samples not yet a whole frame
        self.started_at = 0.0  # monotonic time of ``start``: media timestamps count from it
        self.sent_frames = 0
        self.received_frames = 0

    # ---------------------------------------------------------------- connection
    def open(self, custom_parameters: dict[str, str]) -> None:
        """Connect and send ``connected`` and ``start``; the reader thread runs from here."""
        from websockets.sync.client import connect

        try:
            # entered by hand (closed in close()), as websockets >= 17.1 asks
            self._conn = connect(
                self.url, open_timeout=self.connect_timeout_s, max_size=2**22, compression=None
            ).__enter__()
        except Exception as exc:
            raise StreamError(f"phone stream: cannot connect to {self.url} ({exc})") from exc
        self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        start: JSONObject = {
            "accountSid": self.account_sid,
            "streamSid": self.stream_sid,
            "callSid": self.call_sid,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": RATE, "channels": 1},
            "customParameters": {**custom_parameters},
        }
        self._send({"event": "start", "start": start, "streamSid": self.stream_sid})
        self.started_at = time.monotonic()
        threading.Thread(target=self._read, daemon=True, name="phone-stream-reader").start()

    def close(self) -> None:
        """Send ``stop`` and close (best effort: the agent may be gone already)."""
        if self._conn is None:
            return
        try:
            stop: JSONObject = {"accountSid": self.account_sid, "callSid": self.call_sid}
            self._send({"event": "stop", "streamSid": self.stream_sid, "stop": stop})
            self._conn.close()
        except Exception:  # closing a stream the agent already left is not an error
            pass
        self._conn = None

    # ---------------------------------------------------------------- to the agent
    def send_line(self, samples: npt.NDArray[np.float32] | None, count: int, rate: int) -> None:
        """Send ``count`` line samples at ``rate`` (None: digital silence) as 20 ms mu-law
        ``media`` messages (a partial frame waits for the next call)."""
        if samples is None:
            samples = np.zeros(count, np.float32)
        if self._down is None or self._down[0] != rate:
            self._down = (rate, ResampledStream(rate, RATE))
        narrow = np.concatenate([self._pending, self._down[1](samples)])
        whole = len(narrow) // FRAME_BYTES
        for k in range(whole):
            self._media(float_to_mulaw(narrow[k * FRAME_BYTES : (k + 1) * FRAME_BYTES]))
        self._pending = narrow[whole * FRAME_BYTES :]

    def send_silence_frame(self) -> None:
        self._media(bytes([SILENCE]) * FRAME_BYTES)

    def echo_mark(self, name: str) -> None:
        self._send({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})

    def _media(self, payload: bytes) -> None:
        self._chunk += 1
        media: JSONObject = {
            "track": "inbound",
            "chunk": str(self._chunk),
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "payload": base64.b64encode(payload).decode("ascii"),
        }
        self._send({"event": "media", "streamSid": self.stream_sid, "media": media})
        self.sent_frames += 1

    def _send(self, message: JSONObject) -> None:
        if self._conn is None:
            raise StreamError("phone stream: not connected")
        self._sequence += 1
        try:
            self._conn.send(json.dumps({**message, "sequenceNumber": str(self._sequence)}))
        except Exception as exc:
            raise StreamError(f"phone stream: the agent connection closed ({exc})") from exc

    # ---------------------------------------------------------------- from the agent
    def next(self, deadline: float) -> Incoming | None:
        """The agent's next message, or None when ``deadline`` (monotonic) passes first;
        raises ``StreamError`` on a protocol error or a dropped connection."""
        try:
            item = self._incoming.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if isinstance(item, BaseException):
            self._incoming.put(item)  # every later read fails the same way
            raise item
        return item

    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        conn = self._conn
        assert conn is not None
        while True:
            try:
                raw = conn.recv()
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code in NORMAL_CLOSE:
                    self._incoming.put(Incoming("closed", time.monotonic()))
                else:
                    reason = f"code {code}" if code is not None else "no close frame"
                    self._incoming.put(
                        StreamError(f"phone stream: the agent dropped the connection ({reason})")
                    )
                return
            except Exception as exc:  # the socket failed under us
                self._incoming.put(StreamError(f"phone stream: connection failed ({exc})"))
                return
            try:
                self._incoming.put(self._parse(raw, time.monotonic()))
            except StreamError as exc:
                self._incoming.put(exc)
                return

    def _parse(self, raw: str | bytes, at: float) -> Incoming:
        try:
            message = json.loads(raw)
        except (TypeError, ValueError) as exc:
            raise StreamError(f"phone stream: the agent sent invalid JSON ({exc})") from exc
        event = message.get("event") if isinstance(message, dict) else None
        if event == "media":
            payload = (message.get("media") or {}).get("payload")
            try:
                data = base64.b64decode(str(payload), validate=True)
            except ValueError as exc:
                raise StreamError(f"phone stream: media.payload is not base64 ({exc})") from exc
            self.received_frames += 1
            return Incoming("media", at, audio=mulaw_to_audio(data, "<phone stream agent>"))
        if event == "mark":
            name = (message.get("mark") or {}).get("name")
            if not isinstance(name, str):
                raise StreamError("phone stream: mark.name must be a string")
            return Incoming("mark", at, name=name)
        if event == "clear":
            return Incoming("clear", at)
        raise StreamError(
            f"phone stream: unexpected message {str(raw)[:120]!r} (an agent sends media, mark "
            "or clear)"
        )
