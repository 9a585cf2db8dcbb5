"""How a simulated caller behaves on the line, apart from what it says: where it pauses inside
its own utterance, when it backchannels ("mm-hm") while the agent talks, and when it barges in.

The call engine asks the caller's behaviour for

* a ``SpeakingPlan`` before the caller speaks: the utterance cut into pieces with the silence
  after each piece (a caller still mid-thought: an agent that jumps into such a pause has made a
  false end of turn);
* a ``ListeningPlan`` when an agent utterance starts: backchannels and an optional barge-in, in
  seconds from the utterance's onset as the caller hears it. Events after the point where the
  agent actually stopped never happen. At a barge-in the caller starts its next turn, having
  heard the agent only up to that point.

Behaviours are seeded by whoever builds them; the same seed gives the same plans.
``ScheduledBehaviour`` follows fixed times (golden scenarios, or a user who wants one exact
pattern); persona- and LLM-driven behaviours live beside it.

A behaviour may also report ``stats``: counts of its own decisions that ``call.json`` keeps
(the LLM behaviour's calls and parse failures). ``CallerBehaviourBase`` declares it None; a
behaviour class inherits the base, or defines ``stats`` itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# An explicit pause inside a caller utterance, as personas write it ("um... the code is").
PAUSE_MARKER = re.compile(r"\s*(?:\.\.\.|…)\s*")


@dataclass(frozen=True)
class Backchannel:
    at_s: float  # seconds from the onset of the agent's utterance
    text: str = "mm-hm"


@dataclass(frozen=True)
class BargeIn:
    at_s: float  # seconds from the onset of the agent's utterance


@dataclass(frozen=True)
class ListeningPlan:
    backchannels: tuple[Backchannel, ...] = ()
    barge_in: BargeIn | None = None


@dataclass(frozen=True)
class SpeakingPlan:
    """``pieces`` in the order said; ``pauses_s[i]`` is the silence after ``pieces[i]``
    (one fewer pause than pieces)."""

    pieces: tuple[str, ...]
    pauses_s: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.pieces:
            raise ValueError("a speaking plan needs at least one piece")
        if len(self.pauses_s) != len(self.pieces) - 1:
            raise ValueError("a speaking plan has one pause between each two pieces")
        if any(p < 0 for p in self.pauses_s):
            raise ValueError("pauses cannot be negative")

    @property
    def text(self) -> str:
        return " ".join(self.pieces)


class BehaviourCounts(Protocol):
    """A behaviour's counts of its own decisions, by name."""

    def as_dict(self) -> dict[str, int]: ...


@runtime_checkable
class CallerBehaviour(Protocol):
    def speaking_plan(self, text: str) -> SpeakingPlan: ...

    def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan: ...

    @property
    def stats(self) -> BehaviourCounts | None:
        """Counts of its decisions for ``call.json`` (None: nothing to count)."""
        ...


class CallerBehaviourBase:
    """The default of a behaviour's optional member: no ``stats``."""

    stats: BehaviourCounts | None = None


def split_at_markers(text: str, pause_s: float) -> SpeakingPlan:
    """``text`` cut at its explicit pause markers ("..."), each pause ``pause_s`` long."""
    pieces = tuple(p for p in PAUSE_MARKER.split(text.strip()) if p)
    if len(pieces) <= 1:
        return SpeakingPlan((text.strip(),))
    return SpeakingPlan(pieces, (pause_s,) * (len(pieces) - 1))


@dataclass(frozen=True)
class ScheduledBehaviour(CallerBehaviourBase):
    """Fixed behaviour: pauses only where the text marks them (``pause_s`` each); in every
    agent utterance, backchannels at ``backchannels_at_s`` and a barge-in at
    ``barge_in_at_s`` (None: never), each only if the utterance lasts that long."""

    pause_s: float = 1.0
    backchannels_at_s: tuple[float, ...] = ()
    backchannel_text: str = "mm-hm"
    barge_in_at_s: float | None = None

    def speaking_plan(self, text: str) -> SpeakingPlan:
        return split_at_markers(text, self.pause_s)

    def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan:
        backchannels = tuple(
            Backchannel(t, self.backchannel_text)
            for t in self.backchannels_at_s
            if t < agent_duration_s
        )
        barge = self.barge_in_at_s
        barge_in = BargeIn(barge) if barge is not None and barge < agent_duration_s else None
        return ListeningPlan(backchannels, barge_in)
