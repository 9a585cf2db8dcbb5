"""A call with an agent whose audio flows continuously (WebRTC, a Pipecat pipeline): the line
goes out frame by frame at its time on the link's clock (the wall clock, or a Pipecat
pipeline's virtual one), and replies are found in the agent's audio by level (a
``StreamingCallAgent``; docs/webrtc.md, docs/pipecat.md).

A reply starts with the first chunk louder than ``speech_level_dbfs`` (its latency is that
arrival, measured here) and goes on the line at once as an open reply: the caller's line keeps
going out frame by frame while the rest of the reply arrives, and each frame's worth of the
agent's audio is added to it as it arrives (``MoreAudio``), so the caller can barge in and the
agent can stop. The reply ends after ``reply_gap_ms`` of quieter audio (the quiet tail is not
part of it): that much quiet audio received when the agent's audio never pauses
(``continuous_audio``: WebRTC), that much time without speech otherwise. A reply whose audio
stopped while the caller was speaking (caller speech in the ``yield_window_s`` before its end)
counts as the agent yielding: the engine marks it cut there, and the agent track holds
exactly the audio that arrived. The caller plans its
reactions to a reply for ``expected_reply_s`` (its real length is unknown while it plays).
The link ending (the agent hung up) after its last reply has played ends the call; a
``"failed"`` link is the agent's fault (``SystemFault``, cause ``disconnect``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypedDict

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.errors import ConfigError, SystemFault
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    LineBlock,
    MoreAudio,
    Reply,
)
from voxeval.systems.live.paced_line import PacedLineAgent

if TYPE_CHECKING:
    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord

AGENT_RATE = 16000  # the line's rate and the agent track's


class Incoming(Protocol):
    @property
    def at(self) -> float: ...  # arrival on the link's clock (``LiveAudioAgent._now``)

    @property
    def event(self) -> str: ...  # "audio", "closed" (the agent ended the call) or "failed"

    @property
    def samples(self) -> npt.NDArray[np.float32] | None: ...


class AudioLink(Protocol):
    """Where the caller's frames go and the agent's audio comes from."""

    def start_line(self, t0: float) -> None: ...

    def put(self, frame: int, samples: npt.NDArray[np.float32] | None) -> None: ...

    def next(self, deadline: float) -> Incoming | None: ...

    def close(self) -> None: ...


class ListeningSettings(TypedDict, total=False):
    """How a reply is found in the agent's audio (defaults in ``LiveAudioAgent``)."""

    greeting_wait_s: float
    speech_level_dbfs: float
    reply_gap_ms: float
    turn_timeout_s: float
    expected_reply_s: float
    yield_window_s: float


class LiveAudioAgent(PacedLineAgent[Incoming], ABC):
    """The call logic over an ``AudioLink`` that ``_open`` makes."""

    name = "live-audio"
    streaming = True
    clock = "wall"
    # the agent's audio never pauses (WebRTC sends silence between replies): a reply ends after
    # ``reply_gap_ms`` of quiet audio received, so a stall in delivery does not end it; else
    # (a pipeline's sound card plays nothing between replies) after that much time
    continuous_audio = False
    reports_latency = True  # a reply's latency is when its first loud audio arrived here

    def __init__(
        self,
        *,
        greeting_wait_s: float = 2.0,
        speech_level_dbfs: float = -45.0,
        reply_gap_ms: float = 400.0,
        turn_timeout_s: float = 60.0,
        expected_reply_s: float = 3.0,
        yield_window_s: float = 1.0,
    ) -> None:
        self.greeting_wait_s = greeting_wait_s
        self.expected_reply_s = expected_reply_s
        self.yield_window_s = yield_window_s
        self.level = 10 ** (speech_level_dbfs / 20)
        self.reply_gap_s = reply_gap_ms / 1000
        self.turn_timeout_s = turn_timeout_s
        super().__init__()
        self.link: AudioLink | None = None
        # the open reply (audio still arriving)
        self._fresh: list[npt.NDArray[np.float32]] = []  # arrived, not yet handed over
        self._fresh_loud = 0  # how many of them end with speech (the rest is a quiet tail)
        self._reply_at = 0.0  # its onset (link time)
        self._last_loud = 0.0
        self._quiet_s = 0.0  # quiet audio received since its last speech
        self._sent = 0  # samples handed over
        self._caller_spoke_at: float | None = None  # the caller's latest loud frame in it

    @abstractmethod
    def _open(self, scenario: Scenario, tools: ToolRuntime) -> AudioLink:
        """Connect to the agent; return once media can flow both ways (each transport's own)."""

    # ``_now`` (PacedLineAgent) is the link's clock: the arrival stamps' clock, monotonic here;
    # ``pipecat`` on the virtual clock returns its pipeline's own time.

    def _new_tool_calls(self) -> tuple[ToolCallRecord, ...]:
        """The tool calls the agent made since the last reply (attached to the next one)."""
        return ()

    def _failure(self) -> str:
        return f"{self.name}: the agent's connection failed"

    # ---------------------------------------------------------------- start
    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self.link = self._open(scenario, tools)
        self._t0 = self._now()  # the call's time 0: media flows both ways
        self.link.start_line(self._t0)
        deadline = self._t0 + self.greeting_wait_s
        while (item := self._next(deadline)) is not None:
            if self._speaks(item):  # the agent greets
                return self._reply(item, 0.0)
            if item.event == "closed":
                return AgentTurn(text=None, tool_calls=self._new_tool_calls(), end_call=True)
        # the caller opens: the call's time 0 is now (the wait was silence on both sides), so
        # the caller's first words go out when the timeline says
        self._t0 = self._now()
        self.link.start_line(self._t0)
        return None

    # ---------------------------------------------------------------- the line
    def _check_line(self, block: LineBlock) -> None:
        if block.rate != AGENT_RATE:
            raise ConfigError(f"{self.name}: the line runs at {block.rate} Hz, not {AGENT_RATE}")

    def _send(self, frame: int, samples: npt.NDArray[np.float32] | None, block: LineBlock) -> None:
        assert self.link is not None
        self.link.put(frame, samples)

    def _frame_sent(self, samples: npt.NDArray[np.float32] | None, end_s: float) -> None:
        """Note the caller speaking over the open reply (to tell a yield from an ending)."""
        if self._reply_open and samples is not None and rms(samples) >= self.level:
            self._caller_spoke_at = end_s

    def _arrivals(self, frame: int, until: float, at_s: float) -> AgentAction | None:
        while (item := self._next(until)) is not None:
            if self._speaks(item):
                return Reply(frame, partial(self._reply, item, at_s))
        return None

    def _hang_up(self) -> AgentTurn:
        return AgentTurn(text=None, tool_calls=self._new_tool_calls(), end_call=True)

    def _wait(self, until: float) -> None:
        while (item := self._next(until)) is not None:
            if self._speaks(item):  # a reply begins: taken after the frame now due
                self._early = item
                return

    def _next(self, deadline: float) -> Incoming | None:
        """The next item from the agent; a failed link is the agent's fault."""
        assert self.link is not None
        item = self.link.next(deadline)
        if item is not None and item.event == "failed":
            raise SystemFault(self._failure(), cause="disconnect")
        if item is not None and item.event == "closed":
            self._hung_up = True
        return item

    def _speaks(self, item: Incoming) -> bool:
        return item.samples is not None and rms(item.samples) >= self.level

    # ---------------------------------------------------------------- replies
    def _reply(self, first: Incoming, at_s: float) -> AgentTurn:
        """The reply that starts with ``first``, opened on the line (the rest follows)."""
        assert first.samples is not None
        self._reply_open, self._fresh, self._fresh_loud = True, [], 0
        self._reply_at = self._last_loud = first.at
        self._quiet_s = 0.0
        self._sent = len(first.samples)
        self._playing_until = first.at + self._sent / AGENT_RATE
        self._caller_spoke_at = None
        compute = max(0.0, first.at - (self._t0 + at_s))
        return AgentTurn(
            text=None,
            audio=Audio(first.samples.astype(np.float32), AGENT_RATE, f"<{self.name} agent>"),
            tool_calls=self._new_tool_calls(),
            compute_s=compute,
            open=True,
            expected_s=self.expected_reply_s,
        )

    def _collect(self, until: float) -> None:
        """Take in the open reply's audio that arrives until ``until``."""
        while (item := self._next(until)) is not None:
            if item.samples is None:
                continue  # "closed": the reply ends (``_more``)
            self._fresh.append(item.samples)
            if self._speaks(item):
                self._fresh_loud, self._last_loud = len(self._fresh), item.at
                self._quiet_s = 0.0
            else:
                self._quiet_s += len(item.samples) / AGENT_RATE

    def _more(self, frame: int) -> MoreAudio | None:
        """Hand over what arrived up to its last speech, or end the reply after
        ``reply_gap_ms`` of quiet (or when the agent hung up or the reply ran too long)."""
        if self._fresh_loud:
            pieces, self._fresh = self._fresh[: self._fresh_loud], self._fresh[self._fresh_loud :]
            self._fresh_loud = 0
            samples = np.concatenate(pieces).astype(np.float32)
            self._sent += len(samples)
            self._playing_until = self._reply_at + self._sent / AGENT_RATE
            return MoreAudio(frame, Audio(samples, AGENT_RATE, f"<{self.name} agent>"))
        now = self._now()
        too_long = now - self._reply_at > self.turn_timeout_s
        if self.continuous_audio:
            quiet_enough = self._quiet_s >= self.reply_gap_s
        else:
            quiet_enough = now >= self._last_loud + self.reply_gap_s
        if not (quiet_enough or self._hung_up or too_long):
            return None
        self._reply_open, self._fresh = False, []  # the quiet tail is not part of the reply
        end = self._playing_until
        spoke = self._caller_spoke_at
        yielded = spoke is not None and end - self.yield_window_s <= spoke
        return MoreAudio(frame, done=True, yielded=yielded)

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """Nothing to tell: the agent hears the line itself (a deliberate no-op hook)."""

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None


def rms(samples: npt.NDArray[np.float32]) -> float:
    return math.sqrt(float(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
