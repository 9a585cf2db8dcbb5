"""The caller's line handed to a live agent frame by frame at its time (``hear``), shared by
the agents whose audio arrives on their own schedule: the WebRTC and Pipecat agents
(``live_audio_agent``) and the phone media stream (``phone_stream``).

For each frame of a block: while a reply is open, take in what the agent sent up to the
frame's start, otherwise wait for that moment (noting a reply that begins meanwhile); once the
agent hung up and its last reply has played, end the call; send the frame; then either carry
the open reply on (``MoreAudio``, or the agent yielding) or start the reply that arrived during
the frame. What differs per transport (how a frame is sent, what else arrives) are the hooks.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from functools import partial
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from voxeval.systems.call import AgentAction, AgentTurn, CallAgentBase, LineBlock, Reply

IncomingT = TypeVar("IncomingT")


class PacedLineAgent(CallAgentBase, ABC, Generic[IncomingT]):
    """``hear`` for an agent on the link's clock; ``IncomingT`` is what its transport delivers."""

    streaming = True

    def __init__(self) -> None:
        self._t0 = 0.0  # the call's time 0 on the link's clock
        self._playing_until = 0.0  # the link-clock end of the latest reply's audio
        self._hung_up = False
        self._early: IncomingT | None = None  # a reply's onset seen while waiting for a frame
        self._reply_open = False  # a reply whose audio is still arriving

    def _now(self) -> float:
        """The link's clock: monotonic unless the transport keeps its own time."""
        return time.monotonic()

    # ---------------------------------------------------------------- per transport
    @abstractmethod
    def _check_line(self, block: LineBlock) -> None:
        """Refuse a line this transport cannot carry (``ConfigError``)."""

    @abstractmethod
    def _send(self, frame: int, samples: npt.NDArray[np.float32] | None, block: LineBlock) -> None:
        """Put one frame of the caller's line on the transport."""

    def _frame_sent(self, samples: npt.NDArray[np.float32] | None, end_s: float) -> None:
        """After a frame went out (``end_s``: its end on the link's clock); nothing by default."""

    @abstractmethod
    def _wait(self, until: float) -> None:
        """Until ``until``, take in what needs no action; keep a reply's onset in ``_early``."""

    @abstractmethod
    def _collect(self, until: float) -> None:
        """Take in what the agent sends until ``until`` while its reply is open."""

    @abstractmethod
    def _more(self, frame: int) -> AgentAction | None:
        """The open reply's new audio, its end, or the agent yielding, after ``frame``."""

    @abstractmethod
    def _arrivals(self, frame: int, until: float, at_s: float) -> AgentAction | None:
        """What the agent sent during the frame, up to ``until``: a reply starting (``at_s``:
        the end of the frame on the call's time), another action, or None."""

    @abstractmethod
    def _reply(self, first: IncomingT, at_s: float) -> AgentTurn:
        """The reply that starts with ``first``, opened on the line (the rest follows)."""

    @abstractmethod
    def _hang_up(self) -> AgentTurn:
        """The agent's end of the call."""

    # ---------------------------------------------------------------- the line
    def hear(self, block: LineBlock) -> AgentAction | None:
        """Hand the block over frame by frame at its time; the agent's first action applies
        after the frame just handed over."""
        self._check_line(block)
        for i in range(block.frames):
            frame = block.start + i
            due = self._t0 + frame * block.frame_s
            if self._reply_open:
                self._collect(due)
            elif self._early is None and not self._hung_up:
                self._wait(due)
            if self._hung_up and not self._reply_open:
                if block.playing or self._now() < self._playing_until:
                    continue  # its last reply plays out first
                return Reply(frame, self._hang_up)
            samples = block.frame(i)
            if not self._hung_up:
                self._send(frame, samples, block)
            self._frame_sent(samples, due + block.frame_s)
            at_s = (frame + 1) * block.frame_s
            if self._reply_open:
                self._collect(due + block.frame_s)
                action = self._more(frame)
                if action is not None:
                    return action
                continue
            if self._early is not None:
                early, self._early = self._early, None
                return Reply(frame, partial(self._reply, early, at_s))
            action = self._arrivals(frame, due + block.frame_s, at_s)
            if action is not None:
                return action
        return None
