"""The ``phone-stream`` system: an agent that takes phone calls through a media-stream
websocket (the Twilio Media Streams message set), called as deployed (docs/phone-streams.md).

The call runs on the wall clock. voxeval streams the caller's line to the agent in real time as
8 kHz mu-law (telephone band); what the agent sends back is the agent track:

* ``media`` after a quiet line starts a reply at the frame it arrived in (its latency is the
  arrival time, measured here); the reply goes on the line at once, played from its onset in
  real time, and grows with the audio that keeps arriving (``MoreAudio``) until the agent has
  sent nothing for ``reply_gap_ms``. The caller's frames keep going out meanwhile, so the
  caller can barge in on a reply whose audio is still arriving.
* ``clear`` while the agent's speech plays: the agent yields there; the audio it had sent that
  the line had not played yet is dropped (never on the agent track).
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
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SYSTEMS, SystemBase
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    LineBlock,
    MoreAudio,
    Reply,
    StopSpeaking,
)
from voxeval.systems.live.media_stream import Incoming, MediaStream, ResampledStream, StreamError
from voxeval.systems.live.paced_line import PacedLineAgent
from voxeval.systems.options import parse_options
from voxeval.systems.tool_service import ToolGrant, shared_tool_service

if TYPE_CHECKING:
    from voxeval.benchmarks.eva.scenario import Scenario
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
    # the caller plans its reactions (barge-in, backchannels) to a reply for this long (its
    # real length is unknown while its audio arrives)
    expected_reply_s: float = Field(default=3.0, gt=0)


@SYSTEMS.register("phone-stream")
class PhoneStreamSystem(SystemBase):
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

    def identity(self) -> JSONObject:
        return {"type": "phone-stream", "url": self.options.url, "clock": "wall"}

    def open_call(self) -> PhoneStreamAgent:
        return PhoneStreamAgent(**self.options.model_dump())


class PhoneStreamAgent(PacedLineAgent[Incoming]):
    """One call's media stream (a ``StreamingCallAgent`` on the wall clock)."""

    name = "phone-stream"
    streaming = True
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
        expected_reply_s: float = 3.0,
    ) -> None:
        self.stream = MediaStream(url, connect_timeout_s=connect_timeout_s)
        self.expected_reply_s = expected_reply_s
        self.custom_parameters = dict(custom_parameters or {})
        self.serve_tools = serve_tools
        self.greeting_wait_s = greeting_wait_s
        self.reply_gap_s = reply_gap_ms / 1000
        self.turn_timeout_s = turn_timeout_s
        super().__init__()
        self.grant: ToolGrant | None = None
        self._marks: list[tuple[float, str]] = []  # (monotonic time it has played, name)
        self._ended = False
        # the open reply (its audio still arriving)
        self._fresh: list[npt.NDArray[np.float32]] = []  # 8 kHz audio not handed over yet
        self._resampler: ResampledStream | None = None
        self._played_from = 0.0  # monotonic time its audio starts playing
        self._received_s = 0.0  # seconds of its audio received
        self._last_media = 0.0
        self._cleared = False

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
    def _check_line(self, block: LineBlock) -> None:
        if block.speech is not None:
            raise ConfigError(
                "phone-stream: a phone line carries audio; run it with simulation.mode: audio"
            )

    def _send(self, frame: int, samples: npt.NDArray[np.float32] | None, block: LineBlock) -> None:
        self.stream.send_line(samples, block.frame_len, block.rate)

    def _frame_sent(self, samples: npt.NDArray[np.float32] | None, end_s: float) -> None:
        self._echo_played_marks()

    def _arrivals(self, frame: int, until: float, at_s: float) -> AgentAction | None:
        while (item := self.stream.next(until)) is not None:
            if item.event == "media":
                return Reply(frame, partial(self._reply, item, at_s))
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
        """The reply that starts with ``first``, opened on the line (the rest follows)."""
        assert first.audio is not None
        self._reply_open, self._fresh, self._cleared = True, [], False
        self._resampler = ResampledStream(8000, AGENT_RATE)
        self._played_from = max(first.at, time.monotonic())
        self._received_s = first.audio.duration
        self._last_media = first.at
        self._playing_until = self._played_from + self._received_s
        compute = max(0.0, first.at - (self._t0 + at_s))
        samples = self._resampler(first.audio.samples)
        return AgentTurn(
            text=None,
            audio=Audio(samples.astype(np.float32), AGENT_RATE, "<phone stream agent>"),
            tool_calls=self._new_tool_calls(),
            compute_s=compute,
            open=True,
            expected_s=self.expected_reply_s,
        )

    def _collect(self, until: float) -> None:
        """Take in what the agent sends until ``until`` while its reply is open."""
        while (item := self.stream.next(until)) is not None:
            if item.event == "media" and item.audio is not None:
                self._fresh.append(item.audio.samples)
                self._received_s += item.audio.duration
                self._last_media = item.at
                self._playing_until = self._played_from + self._received_s
            elif item.event == "mark":  # played once the audio sent before it has
                self._marks.append((self._playing_until, item.name))
            elif item.event == "clear":
                self._cleared = True
                return
            elif item.event == "closed":
                self._hung_up = True
                return

    def _more(self, frame: int) -> AgentAction | None:
        """The open reply's new audio, its end after ``reply_gap_ms`` without media, or the
        agent's ``clear`` (it yields: what the line has not played is dropped)."""
        assert self._resampler is not None
        if self._cleared:
            self._reply_open, self._fresh = False, []
            self._clear()
            return StopSpeaking(frame)
        if self._fresh:
            pieces, self._fresh = self._fresh, []
            samples = self._resampler(np.concatenate(pieces))
            return MoreAudio(frame, Audio(samples.astype(np.float32), AGENT_RATE, "<phone>"))
        now = time.monotonic()
        too_long = now - self._played_from > self.turn_timeout_s
        if now < self._last_media + self.reply_gap_s and not self._hung_up and not too_long:
            return None
        self._reply_open = False
        tail = self._resampler(np.zeros(0, np.float32), last=True)
        audio = Audio(tail.astype(np.float32), AGENT_RATE, "<phone>") if len(tail) else None
        return MoreAudio(frame, audio, done=True)  # it plays out to its end

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
