"""What a system under test exchanges in a live call, and the per-call session interfaces.

Two interfaces, told apart by the agent's ``streaming`` flag:

* ``CallAgent`` answers whole caller turns (``respond``). The call engine puts it behind the
  turn-handling adapter (``voxeval.systems.turn_handling``), which listens to the line frame by
  frame and decides when to answer, when to stop talking and what the caller heard.
* ``StreamingCallAgent`` receives the caller's line itself, in blocks of frames, including
  while it speaks (``hear``), and returns actions: ``Reply`` (take the turn: the engine runs
  the given function, measures it and plays the answer), ``StopSpeaking`` (yield now) or
  ``MoreAudio`` (a live agent's reply goes on: its audio arrives while it plays).
  Returning None means keep doing what it does (listen, or keep talking).

The engine owns time: frames, playback, measured compute (or a latency model) on the call's
clock. In text-only mode frames carry the caller's words instead of audio.

Every optional member of both interfaces (its clock, whether it reports its own latency, its
own turn handling, closing...) is declared on them, with its default on ``CallAgentBase``:
built-in agents inherit it, and a plugin agent should too (or define each member itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeGuard, runtime_checkable

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.systems.turn_policy import FrameVAD, TurnPolicy


@dataclass(frozen=True)
class AgentTurn:
    """The agent's answer to one user turn.

    ``text`` is what the agent intends to say; ``audio`` is its own speech when it produces
    audio itself (speech-to-speech), otherwise the engine renders ``text`` with the agent's
    TTS. ``heard`` is the agent's own transcript of the user turn (for STT WER).
    ``tool_offsets_s``: when the agent reports them, the moment of each tool call in seconds
    after it took the turn (one per ``tool_calls`` entry); otherwise the engine observes them.
    ``backchannel``: a short acknowledgement ("mm-hm") said while the caller holds the floor,
    not a turn: the caller neither yields to it nor answers it.
    ``open``: a live agent's reply whose audio is still arriving: ``audio`` is its start, as it
    goes on the line (not trimmed), and ``MoreAudio`` actions add the rest; the caller plans
    its reactions (backchannels, a barge-in) for ``expected_s`` seconds, as the reply's real
    length is not known yet."""

    text: str | None
    audio: Audio | None = None
    tool_calls: tuple[ToolCallRecord, ...] = ()
    end_call: bool = False
    compute_s: float = 0.0
    heard: str | None = None
    tool_offsets_s: tuple[float, ...] | None = None
    backchannel: bool = False
    open: bool = False
    expected_s: float = 0.0


@dataclass(frozen=True)
class HeardSpeech:
    """A streaming agent's own transcript of caller speech it heard between ``start_s`` and
    ``end_s`` on the call's clock (the engine files it under the caller's turn there)."""

    text: str
    start_s: float
    end_s: float


@runtime_checkable
class CallAgent(Protocol):
    """One call's session with a system that answers whole turns (sessions keep per-call
    state; open one per call). Its optional members have their defaults on
    ``CallAgentBase``."""

    name: str

    @property
    def streaming(self) -> bool:
        """False: it answers whole turns (``respond``) behind voxeval's turn handling. A class
        constant (``ClassVar``), True for a ``StreamingCallAgent``."""
        ...

    @property
    def clock(self) -> str:
        """The clock its calls run on: ``virtual``, or ``wall`` for an agent that lives in real
        time (a remote service). The engine reads it again after ``start``."""
        ...

    @property
    def reports_latency(self) -> bool:
        """True: it measures its own latency (``AgentTurn.compute_s``, a remote agent)."""
        ...

    @property
    def compute_takes_call_time_on_virtual_clock(self) -> bool:
        """False: on the virtual clock its compute takes no call time (it is stepped on that
        clock, e.g. a Pipecat pipeline), so its latencies leave inference out."""
        ...

    @property
    def turn_policy(self) -> TurnPolicy | None:
        """Its own turn handling settings (None: the run's)."""
        ...

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        """Begin a call; return a greeting, or None to let the caller speak first."""
        ...

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        """Answer the caller's last turn (audio in audio mode, text in text-only mode)."""
        ...

    def turn_vad(self) -> FrameVAD | None:
        """The streaming VAD its turn handling listens with (None: the run's)."""
        ...

    def heard_by_caller(self, text: str) -> None:
        """Its last reply was cut short: ``text`` is what the caller heard of it."""
        ...

    def close(self) -> None:
        """The call is over: let go of what the session holds (connections, processes)."""
        ...


@dataclass(frozen=True)
class LineBlock:
    """Consecutive frames of the caller's line as the agent receives them.

    Frames are numbered on the call's frame clock (frame ``k`` covers ``[k, k + 1) *
    frame_s``). ``samples`` holds ``frames * frame_len`` samples at ``rate`` (audio mode), or
    None when the line carried nothing at all (digital silence, which the engine may deliver
    as one long block). In text mode ``speech`` flags the frames in which the caller talks and
    ``words`` maps a frame index to the words the caller finished in it. ``playing``: the
    agent's own speech is on the line during the whole block."""

    start: int
    frames: int
    frame_len: int
    rate: int
    samples: npt.NDArray[np.float32] | None = None
    speech: npt.NDArray[np.bool_] | None = None
    words: dict[int, str] = field(default_factory=dict)
    playing: bool = False

    @property
    def frame_s(self) -> float:
        return self.frame_len / self.rate

    @property
    def silent(self) -> bool:
        return self.samples is None and (self.speech is None or not self.speech.any())

    def frame(self, i: int) -> npt.NDArray[np.float32] | None:
        """Samples of the block's ``i``-th frame (None on a silent block)."""
        if self.samples is None:
            return None
        return self.samples[i * self.frame_len : (i + 1) * self.frame_len]


@dataclass(frozen=True)
class Reply:
    """Take the turn after frame ``frame``: the engine calls ``produce`` (measured as the
    agent's compute), then plays the ``AgentTurn`` it returns (None: say nothing)."""

    frame: int
    produce: Callable[[], AgentTurn | None]


@dataclass(frozen=True)
class StopSpeaking:
    """Stop the agent's playback after frame ``frame`` (the agent yields)."""

    frame: int


@dataclass(frozen=True)
class MoreAudio:
    """More of the agent's open reply arrived by frame ``frame``: ``audio`` goes on the line
    right after what it has sent so far. ``done``: the reply is complete (nothing more
    comes); ``yielded``: it stopped because the caller talked over it (the engine marks the
    reply cut there)."""

    frame: int
    audio: Audio | None = None
    done: bool = False
    yielded: bool = False


AgentAction = Reply | StopSpeaking | MoreAudio


@runtime_checkable
class StreamingCallAgent(Protocol):
    """An agent that listens to the line itself (see the module docstring). Its optional
    members have their defaults on ``CallAgentBase``."""

    name: str

    @property
    def streaming(self) -> bool:
        """True: it listens to the line itself (``hear``); the engine adds no turn handling."""
        ...

    @property
    def clock(self) -> str:
        """As ``CallAgent.clock``."""
        ...

    @property
    def reports_latency(self) -> bool:
        """As ``CallAgent.reports_latency``."""
        ...

    @property
    def compute_takes_call_time_on_virtual_clock(self) -> bool:
        """As ``CallAgent.compute_takes_call_time_on_virtual_clock``."""
        ...

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None: ...

    def hear(self, block: LineBlock) -> AgentAction | None:
        """Take in ``block`` frame by frame; return the first action (the engine then resends
        the frames after ``action.frame``), or None once every frame is taken in."""
        ...

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        """The agent's last reply left the line: ``text`` is what it meant to say and
        ``spoken_fraction`` how much of it was played (1: all; 0: nothing or no speech)."""
        ...

    def take_transcripts(self) -> list[HeardSpeech]:
        """What the agent transcribed of the caller since it was last asked (the engine asks
        after every ``hear``)."""
        ...

    def close(self) -> None:
        """As ``CallAgent.close``."""
        ...


class CallAgentBase:
    """The defaults of every optional member of ``CallAgent`` and ``StreamingCallAgent``.

    Built-in agents inherit it; a plugin agent should (or define every member itself). A turn
    agent implements ``start`` and ``respond``; a streaming agent sets ``streaming = True`` and
    implements ``start``, ``hear`` and ``utterance_done``. Override what differs."""

    name: str
    streaming: ClassVar[bool] = False
    clock: str = "virtual"
    reports_latency: bool = False
    compute_takes_call_time_on_virtual_clock: bool = True
    turn_policy: TurnPolicy | None = None

    def turn_vad(self) -> FrameVAD | None:
        """Turn agents: no VAD of its own, the run's is used."""
        return None

    def heard_by_caller(self, text: str) -> None:
        """Turn agents: nothing to correct (an agent without a history of its own)."""

    def take_transcripts(self) -> list[HeardSpeech]:
        """Streaming agents: no transcripts of its own."""
        return []

    def close(self) -> None:
        """Nothing to let go of."""


def is_streaming(agent: CallAgent | StreamingCallAgent) -> TypeGuard[StreamingCallAgent]:
    """Does ``agent`` listen to the line itself? Read from its declared ``streaming`` flag,
    which a wrapper (e.g. the usage ledger's) passes on, where an ``isinstance`` check against
    the protocol would look at the wrapper's own members (Python 3.12 does)."""
    return agent.streaming
