"""The Realtime client with the endpoint's own turn detection (``turn_detection: server_vad``).

A ``StreamingCallAgent``: every frame of the caller's line the engine hands over goes to the
server as ``input_audio_buffer.append`` (silence included, never a commit), and the agent acts
on the server's detector:

* ``input_audio_buffer.speech_started`` while the agent's reply plays: the caller cut in. The
  agent stops its playback (``StopSpeaking``), sends ``response.cancel`` and
  ``conversation.item.truncate`` with the milliseconds of its reply that were played, and keeps
  the truncated text in its history, as real clients do;
* ``input_audio_buffer.speech_stopped`` (the server then commits and answers by itself): the
  agent takes the turn (``Reply``); its answer is the server's response, function calls run on
  the scenario's tools and their outputs go back before the model continues.

Timing. The server's events carry positions in the audio it received (``audio_start_ms``
includes ``prefix_padding_ms`` of audio before the detection point; ``audio_end_ms`` includes
the ``silence_duration_ms`` it waited), and the agent appends the line from the call's first
frame on, so an event maps to the frame of the call at which the server decided, on any clock:
speech started at frame ``(audio_start_ms + prefix_padding_ms) / frame_ms``, stopped at
``audio_end_ms / frame_ms``. After each block of appends the agent sends an empty
``session.update`` and reads every event up to its ``session.updated``: a server that handles
events in order (the loopback test server does) has then reported everything about that audio.
An event found late (a hosted server still working) is acted on at the next block's first
frame. The reply's latency is measured: from the arrival of ``speech_stopped`` to the first
audio delta (``reports_latency``), so on the virtual clock the reply starts at the detection
frame plus the endpoint's own response time.

Frames already sent are not sent again: when the agent acts in the middle of a block, the
engine hands the rest of the block over again and only the frames after the last one sent go
out.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any, Unpack

import numpy as np

from voxeval.audio import Audio
from voxeval.errors import ConfigError, EndpointError
from voxeval.json_types import JSONObject
from voxeval.systems.call import AgentAction, AgentTurn, LineBlock, Reply, StopSpeaking
from voxeval.systems.live.pcm16 import audio_to_pcm16
from voxeval.systems.live.realtime_ws import (
    RATE,
    RECEIVED,
    RealtimeAgent,
    RealtimeSettings,
    _harmless,
    _message,
)
from voxeval.systems.turn_handling import words_spoken

VAD_EVENTS = ("input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped")


class ServerVadRealtimeAgent(RealtimeAgent):
    """One call's session with a Realtime endpoint whose detector takes the turns."""

    streaming = True  # it listens to the line: the server's detector decides the turns

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        prefix_padding_ms: int = 300,
        silence_duration_ms: int = 500,
        sync_every_ms: int = 20,
        **common: Unpack[RealtimeSettings],
    ) -> None:
        super().__init__(**common)
        self.sync_every_ms = sync_every_ms
        self.threshold = threshold
        self.prefix_padding_ms = prefix_padding_ms
        self.silence_duration_ms = silence_duration_ms
        self._sent = 0  # frames of the line appended so far
        self._due: list[tuple[int, dict[str, Any]]] = []  # (frame, event), in arrival order
        self._fault: str | None = None  # an error event met while listening
        self._playing_from: int | None = None  # first frame of the reply on the line
        self._cut = False  # the current reply was stopped by a barge-in
        self.history: list[dict[str, str]] = []  # the agent's replies as the caller heard them
        self.truncations: list[dict[str, Any]] = []  # conversation.item.truncate sent

    def _turn_detection(self) -> JSONObject | None:
        return {
            "type": "server_vad",
            "threshold": self.threshold,
            "prefix_padding_ms": self.prefix_padding_ms,
            "silence_duration_ms": self.silence_duration_ms,
            "create_response": True,  # the server answers a committed turn by itself
            "interrupt_response": True,
        }

    def _collect(self, asked: float) -> AgentTurn:
        turn = super()._collect(asked)
        if turn.text:
            self.history.append({"role": "assistant", "text": turn.text})
        return turn

    # ------------------------------------------------------------------ listening
    def hear(self, block: LineBlock) -> AgentAction | None:
        if self._ws is None:
            raise ConfigError("agent openai-realtime: hear() called before start()")
        if block.speech is not None:
            raise ConfigError(
                "agent openai-realtime: turn_detection server_vad needs audio "
                "(simulation.mode: audio)"
            )
        if block.playing and self._playing_from is None:
            self._playing_from = block.start
        end = block.start + block.frames
        step = max(1, round(self.sync_every_ms / 1000 / block.frame_s))
        while True:
            action = self._act(block, self._sent)
            if action is not None or self._sent >= end:
                return action
            upto = min(end, max(self._sent, block.start) + step)
            self._append(block, max(self._sent, block.start), upto)
            self._sent = upto
            self._settle()

    def _append(self, block: LineBlock, first: int, end: int) -> None:
        """Frames ``first`` to ``end`` (exclusive) of the line as 24 kHz PCM16, one message
        per frame."""
        lo, hi = (first - block.start) * block.frame_len, (end - block.start) * block.frame_len
        line = block.samples
        samples = np.zeros(hi - lo, np.float32) if line is None else line[lo:hi]
        raw = audio_to_pcm16(Audio(samples, block.rate, "<caller line>"), RATE)
        step = 2 * round(block.frame_s * RATE)
        for i in range(0, len(raw), step):
            self._send(
                type="input_audio_buffer.append",
                audio=base64.b64encode(raw[i : i + step]).decode("ascii"),
            )

    def _settle(self) -> None:
        """Read the server's events about the audio sent so far (up to the reply to an
        empty ``session.update``); detector events are kept with their frames, the rest is
        kept for the next response."""
        self._send(type="session.update", session={})
        deadline = time.monotonic() + self.turn_timeout_s
        while self._updates_seen < self._updates_sent:
            raw = self._ws.recv(timeout=max(0.01, deadline - time.monotonic()))
            event = self._parse(raw)
            event[RECEIVED] = time.monotonic()
            kind = event.get("type")
            if kind in VAD_EVENTS:
                self._due.append((self._decided_ms(event), event))
            elif kind == "error" and not _harmless(event):
                self._fault = self._fault or _message(event)
            elif kind not in ("session.updated", "error"):
                self._inbox.append(event)

    def _parse(self, raw: str | bytes) -> JSONObject:
        event: dict[str, Any] = json.loads(raw)
        if event.get("type") == "session.updated":
            self._updates_seen += 1
        return event

    def _decided_ms(self, event: JSONObject) -> int:
        """Where in the appended audio the server's detector decided (milliseconds)."""
        if event.get("type") == "input_audio_buffer.speech_started":
            return _int_field(event, "audio_start_ms") + self.prefix_padding_ms
        return _int_field(event, "audio_end_ms")

    def _act(self, block: LineBlock, sent: int) -> AgentAction | None:
        """The first action due in ``block`` before frame ``sent`` (the audio the server has
        had), if any."""
        frame_ms = block.frame_s * 1000
        end = min(block.start + block.frames, sent)
        if self._fault is not None:
            message, self._fault = self._fault, None
            return Reply(block.start, _raiser(f"agent openai-realtime: {self.url}: {message}"))
        while self._due:
            decided_ms, event = self._due[0]
            # the frame whose end reaches the decision point; a late event acts now
            frame = max(block.start, int(np.ceil(decided_ms / frame_ms - 1e-9)) - 1)
            if frame >= end:
                return None
            self._due.pop(0)
            if event["type"] == "input_audio_buffer.speech_started":
                if block.playing and self._playing_from is not None and not self._cut:
                    return self._barge_in(frame, frame_ms)
                continue
            return Reply(frame, self._answer(float(event[RECEIVED])))
        return None

    def _answer(self, asked: float) -> Callable[[], AgentTurn | None]:
        """The server's response to the turn it committed (tools run as it asks); its
        latency counts from ``asked``, when the agent learned of the end of the turn."""

        def produce() -> AgentTurn | None:
            turn = self._collect(asked)
            if turn.text is None and turn.audio is None and not turn.tool_calls:
                return None
            return turn

        return produce

    def _barge_in(self, frame: int, frame_ms: float) -> StopSpeaking:
        """The caller cut in: stop after ``frame``, cancel, and cut the item where the
        playback stopped."""
        assert self._playing_from is not None
        self._cut = True
        played_ms = round((frame + 1 - self._playing_from) * frame_ms)
        self._send(type="response.cancel")
        if self.last_message_item is not None:
            truncate: JSONObject = {
                "item_id": self.last_message_item,
                "content_index": 0,
                "audio_end_ms": played_ms,
            }
            self._send(type="conversation.item.truncate", **truncate)
            self.truncations.append(truncate)
        return StopSpeaking(frame)

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """The reply left the line: the history keeps what the caller heard of it."""
        if text and spoken_fraction < 1.0:
            for entry in reversed(self.history):
                if entry["role"] == "assistant":
                    entry["text"] = words_spoken(entry["text"], spoken_fraction)
                    break
        self._playing_from = None
        self._cut = False


def _raiser(message: str) -> Callable[[], AgentTurn | None]:
    def produce() -> AgentTurn | None:
        raise EndpointError(message)

    return produce


def _int_field(event: JSONObject, field: str) -> int:
    """An integer field of a server event (0 when absent)."""
    value = event.get(field, 0)
    if not isinstance(value, int | float | str):
        raise TypeError(f"server event {event.get('type')!r}: field {field!r} is not a number")
    return int(value)
