"""The ``phone-stream`` system: an agent that takes phone calls through a media-stream
websocket (the Twilio Media Streams message set), called as deployed (docs/phone-streams.md).

The call runs on the wall clock. voxeval streams the caller's line to the agent in real time as
8 kHz mu-law (telephone band); what the agent sends back is the agent track:

* ``media`` after a quiet line starts a reply at the frame it arrived in (its latency is the
  arrival time, measured here); the reply holds the audio that keeps arriving until the agent
  has sent nothing for ``reply_gap_ms``, and is then played from its onset. While a reply's
  audio is arriving, the caller's frames wait and follow at once.
* ``clear`` while the agent's speech plays: the agent yields there.
* ``mark``: echoed when the audio sent before it has played (at once when cleared or already
  played), as the telephone network does.
* A normal close: the agent hung up (after its last reply has played). A dropped connection,
  invalid JSON, an unknown event or no connection at all is the agent's fault
  (``StreamError``): the call ends and is scored as a failure.

Each call's scenario tools are served over MCP and HTTP (``voxeval.systems.tool_service``); the
token and addresses reach the agent in ``start.customParameters``, and the tool calls it makes
are attached to its next reply (timeline) and land in the call's database.
"""

from __future__ import annotations

import importlib.util
import time
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio, resample
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SYSTEMS
from voxeval.systems.call import AgentAction, AgentTurn, LineBlock, Reply, StopSpeaking
from voxeval.systems.media_stream import Incoming, MediaStream, StreamError
from voxeval.systems.options import parse_options
from voxeval.systems.tool_service import ToolGrant, shared_tool_service

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord

AGENT_RATE = 16000  # the agent track's rate (its audio is 8 kHz telephone band upsampled)


class PhoneStreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(pattern=r"^wss?://")
    # extra string fields for start.customParameters (as <Parameter> in a TwiML <Stream>)
    custom_parameters: dict[str, str] = Field(default_factory=dict)
    serve_tools: bool = True  # the scenario tools over MCP/HTTP, token in customParameters
    connect_timeout_s: float = Field(default=15.0, gt=0)
    greeting_wait_s: float = Field(default=1.5, ge=0)  # how long the agent has to greet first
    reply_gap_ms: float = Field(default=250.0, gt=0)  # quiet that ends a reply's audio
    turn_timeout_s: float = Field(default=60.0, gt=0)  # longest reply being received


@SYSTEMS.register("phone-stream")
class PhoneStreamSystem:
    """Holds live calls only; each call opens its own stream (``PhoneStreamAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: PhoneStreamOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> PhoneStreamSystem:
        options = parse_options(spec, PhoneStreamOptions)
        if options.serve_tools and importlib.util.find_spec("mcp") is None:
            raise ConfigError(
                f"system {spec.name!r} (phone-stream): serve_tools needs the mcp extra "
                "(pip install 'voxeval[mcp]'), or set serve_tools: false"
            )
        return cls(spec.name, options)

    def identity(self) -> dict[str, Any]:
        return {"type": "phone-stream", "url": self.options.url, "clock": "wall"}

    def open_call(self) -> PhoneStreamAgent:
        return PhoneStreamAgent(**self.options.model_dump())


class PhoneStreamAgent:
    """One call's media stream (a ``StreamingCallAgent`` on the wall clock)."""

    name = "phone-stream"
    clock = "wall"
    reports_latency = True  # a reply's latency is when its first audio arrived here

    def __init__(
        self,
        url: str,
        *,
        custom_parameters: dict[str, str] | None = None,
        serve_tools: bool = True,
        connect_timeout_s: float = 15.0,
        greeting_wait_s: float = 1.5,
        reply_gap_ms: float = 250.0,
        turn_timeout_s: float = 60.0,
    ) -> None:
        self.stream = MediaStream(url, connect_timeout_s=connect_timeout_s)
        self.custom_parameters = dict(custom_parameters or {})
        self.serve_tools = serve_tools
        self.greeting_wait_s = greeting_wait_s
        self.reply_gap_s = reply_gap_ms / 1000
        self.turn_timeout_s = turn_timeout_s
        self.grant: ToolGrant | None = None
        self._t0 = 0.0
        self._marks: list[tuple[float, str]] = []  # (monotonic time it has played, name)
        self._playing_until = 0.0  # monotonic end of the latest reply's audio
        self._hung_up = False
        self._early: Incoming | None = None  # reply audio that came while waiting for a frame
        self._ended = False

    # ---------------------------------------------------------------- start
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        parameters = {"voxeval_scenario_id": scenario.id}
        if self.serve_tools:
            self.grant = shared_tool_service().register(tools, scenario.id)
            parameters.update(self.grant.as_metadata())
        parameters.update(self.custom_parameters)
        self.stream.open(parameters)
        self._t0 = self.stream.started_at  # the call's time 0: the stream's start
        deadline = self._t0 + self.greeting_wait_s
        while (item := self.stream.next(deadline)) is not None:
            if item.event == "media":  # the agent greets
                return self._reply(item, 0.0)
            if item.event == "closed":
                return AgentTurn(text=None, end_call=True)
            self._side_message(item)
        return None  # the caller opens

    # ---------------------------------------------------------------- the line
    def hear(self, block: LineBlock) -> AgentAction | None:
        """Send the block frame by frame at its time; the first thing the agent does applies
        after the frame just sent."""
        if block.speech is not None:
            raise ConfigError(
                "phone-stream: a phone line carries audio; run it with simulation.mode: audio"
            )
        for i in range(block.frames):
            frame = block.start + i
            due = self._t0 + frame * block.frame_s
            if self._early is None and not self._hung_up:
                self._wait(due)
            if self._hung_up:  # the stream is closed: nothing more goes out
                if block.playing or time.monotonic() < self._playing_until:
                    continue  # its last reply plays out first
                return Reply(frame, self._hang_up)
            self.stream.send_line(block.frame(i), block.frame_len, block.rate)
            self._echo_played_marks()
            if self._early is not None:
                early, self._early = self._early, None
                return Reply(frame, partial(self._reply, early, (frame + 1) * block.frame_s))
            until = due + block.frame_s
            while (item := self.stream.next(until)) is not None:
                if item.event == "media":
                    return Reply(frame, partial(self._reply, item, (frame + 1) * block.frame_s))
                if item.event == "clear" and self._clear():
                    return StopSpeaking(frame)
                self._side_message(item)
        return None

    def _wait(self, until: float) -> None:
        """Until ``until`` (monotonic), answer what the agent sends that needs no action."""
        while (item := self.stream.next(until)) is not None:
            if item.event == "media":  # a reply begins: taken after the frame now due
                self._early = item
                return
            self._side_message(item)

    # ---------------------------------------------------------------- replies
    def _reply(self, first: Incoming, at_s: float) -> AgentTurn:
        """The audio from ``first`` until the agent goes quiet for ``reply_gap_ms``."""
        pieces = [first.audio] if first.audio is not None else []
        played_from = max(first.at, time.monotonic())
        marks: list[tuple[float, str]] = []
        end_call = False
        last = first.at
        limit = first.at + self.turn_timeout_s
        while True:
            item = self.stream.next(min(last + self.reply_gap_s, limit))
            if item is None:
                break
            last = item.at
            if item.event == "media" and item.audio is not None:
                pieces.append(item.audio)
            elif item.event == "mark":
                marks.append((sum(p.duration for p in pieces), item.name))
            elif item.event == "clear":  # dropped before any of it played
                pieces, marks = [], [(0.0, name) for _, name in marks]
            elif item.event == "closed":
                end_call = True
                break
        for _, name in marks if not pieces else []:
            self.stream.echo_mark(name)
        samples = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
        duration = len(samples) / 8000
        self._playing_until = played_from + duration
        self._marks += [(played_from + offset, name) for offset, name in marks if pieces]
        self._hung_up = self._hung_up or end_call
        records = self._new_tool_calls()
        compute = max(0.0, first.at - (self._t0 + at_s))
        if not pieces:
            return AgentTurn(text=None, tool_calls=records, end_call=end_call, compute_s=compute)
        audio = resample(Audio(samples, 8000, "<phone stream agent>"), AGENT_RATE)
        return AgentTurn(
            text=None,
            audio=audio,
            tool_calls=records,
            end_call=end_call,
            compute_s=compute,
        )

    def _hang_up(self) -> AgentTurn:
        return AgentTurn(text=None, tool_calls=self._new_tool_calls(), end_call=True)

    def _new_tool_calls(self) -> tuple[ToolCallRecord, ...]:
        if self.grant is None:
            return ()
        return tuple(shared_tool_service().records_since(self.grant.token))

    # ---------------------------------------------------------------- side messages
    def _side_message(self, item: Incoming) -> None:
        if item.event == "mark":  # nothing is playing past it: it has played
            when = max(self._playing_until, time.monotonic())
            self._marks.append((when, item.name))
            self._echo_played_marks()
        elif item.event == "clear":
            self._clear()
        elif item.event == "closed":
            self._hung_up = True

    def _clear(self) -> bool:
        """The agent dropped its buffered audio; True when some was still playing."""
        playing = time.monotonic() < self._playing_until
        for _, name in self._marks:
            self.stream.echo_mark(name)
        self._marks = []
        self._playing_until = min(self._playing_until, time.monotonic())
        return playing

    def _echo_played_marks(self) -> None:
        now = time.monotonic()
        due = [m for m in self._marks if m[0] <= now]
        self._marks = [m for m in self._marks if m[0] > now]
        for _, name in due:
            self.stream.echo_mark(name)

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """The telephone network tells the agent nothing about this beyond marks."""

    def close(self) -> None:
        if self._ended:
            return
        self._ended = True
        self.stream.close()
        if self.grant is not None:
            shared_tool_service().revoke(self.grant.token)


__all__ = ["PhoneStreamAgent", "PhoneStreamOptions", "PhoneStreamSystem", "StreamError"]
