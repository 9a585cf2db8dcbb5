"""The ``webrtc`` system: an agent that listens on WebRTC, dialled as deployed (docs/webrtc.md).

The call runs on the wall clock (``clock: wall`` in the call record). The simulated caller's
line goes out as a real-time audio track (``voxeval.systems.webrtc_peer``); what comes back
on the agent's track is the agent track. WebRTC audio flows without pause (silence between
replies), so a reply is found by its level: it starts with the first 20 ms chunk louder than
``speech_level_dbfs`` (its latency is that arrival, measured here) and ends after
``reply_gap_ms`` of quieter audio; it is then played from its onset. While a reply is being
received the caller's line carries silence (the engine takes the reply whole).

The agent ending its track (it hung up) after its last reply has played ends the call; a
failed connection, an offer answered with an error or not an SDP answer, or no connection
within ``connect_timeout_s`` is the agent's fault (``SystemFault``), scored as a failure.
The agent's tools run in its own backend (or over voxeval's tool service): this transport
carries audio only.
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, SystemFault
from voxeval.registry import register
from voxeval.systems.base import CALL
from voxeval.systems.call import AgentAction, AgentTurn, LineBlock, Reply
from voxeval.systems.options import parse_options

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.systems.webrtc_peer import Incoming, WebRTCPeer

AGENT_RATE = 16000  # the agent track's rate (the agent's Opus audio is decoded to this)


class WebRTCOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # the agent's offer endpoint, e.g. a Pipecat runner's http://host:7860/api/offer
    url: str = Field(pattern=r"^https?://")
    request_data: dict[str, Any] = Field(default_factory=dict)  # sent with the offer
    connect_timeout_s: float = Field(default=15.0, gt=0)
    greeting_wait_s: float = Field(default=2.0, ge=0)  # how long the agent has to greet first
    speech_level_dbfs: float = Field(default=-45.0, lt=0)  # louder chunks are the agent speaking
    reply_gap_ms: float = Field(default=400.0, gt=0)  # quiet that ends a reply
    turn_timeout_s: float = Field(default=60.0, gt=0)  # longest reply being received


@register("system", "webrtc")
class WebRTCSystem:
    """Holds live calls only; each call opens its own peer connection (``WebRTCAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: WebRTCOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> WebRTCSystem:
        return cls(spec.name, parse_options(spec, WebRTCOptions))

    def identity(self) -> dict[str, Any]:
        return {"type": "webrtc", "url": self.options.url, "clock": "wall"}

    def open_call(self) -> WebRTCAgent:
        return WebRTCAgent(**self.options.model_dump())


class WebRTCAgent:
    """One call over WebRTC (a ``StreamingCallAgent`` on the wall clock)."""

    name = "webrtc"
    clock = "wall"
    reports_latency = True  # a reply's latency is when its first loud audio arrived here

    def __init__(
        self,
        url: str,
        *,
        request_data: dict[str, Any] | None = None,
        connect_timeout_s: float = 15.0,
        greeting_wait_s: float = 2.0,
        speech_level_dbfs: float = -45.0,
        reply_gap_ms: float = 400.0,
        turn_timeout_s: float = 60.0,
    ) -> None:
        self.url = url
        self.request_data = dict(request_data or {})
        self.connect_timeout_s = connect_timeout_s
        self.greeting_wait_s = greeting_wait_s
        self.level = 10 ** (speech_level_dbfs / 20)
        self.reply_gap_s = reply_gap_ms / 1000
        self.turn_timeout_s = turn_timeout_s
        self.peer: WebRTCPeer | None = None
        self._t0 = 0.0
        self._playing_until = 0.0  # monotonic end of the latest reply's audio
        self._hung_up = False
        self._early: Incoming | None = None  # a reply's onset seen while waiting for a frame

    # ---------------------------------------------------------------- start
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        try:
            from voxeval.systems.webrtc_peer import WebRTCPeer
        except ImportError as exc:  # aiortc is an optional extra
            raise ConfigError(
                "the webrtc system needs aiortc: pip install 'voxeval[webrtc]'"
            ) from exc
        self.peer = WebRTCPeer(self.url, rate=AGENT_RATE)
        data = {"voxeval_scenario_id": scenario.id, **self.request_data}
        self.peer.connect(data, self.connect_timeout_s)
        self._t0 = time.monotonic()  # the call's time 0: media flows both ways
        self.peer.start_line(self._t0)
        deadline = self._t0 + self.greeting_wait_s
        while (item := self._next(deadline)) is not None:
            if self._speaks(item):  # the agent greets
                return self._reply(item, 0.0)
            if item.event == "closed":
                return AgentTurn(text=None, end_call=True)
        return None  # the caller opens

    # ---------------------------------------------------------------- the line
    def hear(self, block: LineBlock) -> AgentAction | None:
        """Hand the block over frame by frame at its time; the agent's first reply starts
        after the frame just handed over."""
        assert self.peer is not None
        if block.rate != AGENT_RATE:
            raise ConfigError(f"webrtc: the line runs at {block.rate} Hz, expected {AGENT_RATE}")
        for i in range(block.frames):
            frame = block.start + i
            due = self._t0 + frame * block.frame_s
            if self._early is None and not self._hung_up:
                self._wait(due)
            if self._hung_up:
                if block.playing or time.monotonic() < self._playing_until:
                    continue  # its last reply plays out first
                return Reply(frame, lambda: AgentTurn(text=None, end_call=True))
            self.peer.put(frame, block.frame(i))
            at_s = (frame + 1) * block.frame_s
            if self._early is not None:
                early, self._early = self._early, None
                return Reply(frame, partial(self._reply, early, at_s))
            until = due + block.frame_s
            while (item := self._next(until)) is not None:
                if self._speaks(item):
                    return Reply(frame, partial(self._reply, item, at_s))
        return None

    def _wait(self, until: float) -> None:
        while (item := self._next(until)) is not None:
            if self._speaks(item):  # a reply begins: taken after the frame now due
                self._early = item
                return

    def _next(self, deadline: float) -> Incoming | None:
        """The next item from the agent; a failed connection is the agent's fault."""
        assert self.peer is not None
        item = self.peer.next(deadline)
        if item is not None and item.event == "failed":
            raise SystemFault(f"webrtc: the connection to {self.url} failed", cause="disconnect")
        if item is not None and item.event == "closed":
            self._hung_up = True
        return item

    def _speaks(self, item: Incoming) -> bool:
        return item.samples is not None and _rms(item.samples) >= self.level

    # ---------------------------------------------------------------- replies
    def _reply(self, first: Incoming, at_s: float) -> AgentTurn:
        """The agent's audio from ``first`` until ``reply_gap_ms`` without speech."""
        assert first.samples is not None
        pieces = [first.samples]
        kept = 1  # pieces up to the last loud one
        last_loud = first.at
        limit = first.at + self.turn_timeout_s
        while True:
            item = self._next(min(last_loud + self.reply_gap_s, limit))
            if item is None or item.event == "closed":
                break
            if item.samples is None:
                continue
            pieces.append(item.samples)
            if self._speaks(item):
                kept, last_loud = len(pieces), item.at
        samples = np.concatenate(pieces[:kept]).astype(np.float32)
        self._playing_until = first.at + len(samples) / AGENT_RATE
        compute = max(0.0, first.at - (self._t0 + at_s))
        audio = Audio(samples, AGENT_RATE, "<webrtc agent>")
        return AgentTurn(text=None, audio=audio, end_call=False, compute_s=compute)

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """WebRTC tells the agent nothing about playback: it hears the line itself."""

    def close(self) -> None:
        if self.peer is not None:
            self.peer.close()
            self.peer = None


def _rms(samples: np.ndarray[Any, Any]) -> float:
    return math.sqrt(float(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0


__all__ = ["WebRTCAgent", "WebRTCOptions", "WebRTCSystem"]
