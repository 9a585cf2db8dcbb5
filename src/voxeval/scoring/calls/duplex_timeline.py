"""The full-duplex events of a recorded call, read from its timeline: caller barge-ins and
what the agent did about them, the caller's backchannels, the pauses inside caller turns and
the time both parties spoke at once. The metrics built on them are in ``duplex_metrics``;
the definitions, with worked examples, are in docs/turn-taking.md (section 9).

Only floor speech takes part (backchannels are read on their own, see ``floor_speech``).
"The agent speaks" at time t means some agent floor segment has start < t < end: touching
segments do not overlap, and a caller starting at the very moment the agent starts is not
barging in (the turn numbering breaks that tie the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from voxeval.scoring.calls.floor_speech import backchannels, floor_speech
from voxeval.simulation.timeline import SpeakerSegment, Timeline

Span = tuple[float, float]
# Times closer than this (s) are the same instant: the call end cutting a segment, float noise.
SAME_INSTANT_S = 1e-6
# An agent's early stop is put down to caller speech in this many seconds before it (the
# call engine records its cut reasons with the same window).
CAUSE_WINDOW_S = 2.0


@dataclass(frozen=True)
class BargeIn:
    """A caller floor segment that started while the agent spoke, and how that agent
    segment ended. ``yielded``: the agent stopped early (its segment is marked
    ``interrupted``); ``cut_by_call_end``: the call ended while the agent still spoke, so
    whether it would have stopped is unknown."""

    turn: int  # the caller's turn number
    start: float
    agent_start: float
    agent_end: float
    yielded: bool
    cut_by_call_end: bool

    @property
    def stop_ms(self) -> float:
        """From the caller's onset to where the agent's audio stopped."""
        return (self.agent_end - self.start) * 1000.0


@dataclass(frozen=True)
class HeardBackchannel:
    """A caller backchannel and the agent segment it was said over (None: said while the
    agent was silent). ``agent_yielded``: the agent stopped early after it with no caller
    barge-in to stop for, and it was the caller's last backchannel before that stop."""

    start: float
    end: float
    agent_span: Span | None
    agent_yielded: bool


@dataclass(frozen=True)
class CallerPause:
    """A silence between two consecutive floor segments of the same caller turn (``start``
    to ``end``, where the caller resumed until ``resumed_until``). ``agent_onset``: the first
    time the agent started speaking from the start of the pause until the caller finished the
    resumed piece (None: it waited). An onset after the caller resumed still counts: an agent
    that took the pause for the end of the turn and then spent its response time may start
    only once the caller is talking again. ``agent_speaking``: the agent was already talking
    when the pause began."""

    turn: int
    start: float
    end: float
    resumed_until: float
    agent_onset: float | None
    agent_speaking: bool

    @property
    def length_ms(self) -> float:
        return (self.end - self.start) * 1000.0

    @property
    def onset_in_pause(self) -> bool:
        return self.agent_onset is not None and self.agent_onset < self.end


def _playing_at(segments: list[SpeakerSegment], t: float) -> SpeakerSegment | None:
    """The segment (of one party) whose audio is playing at ``t``; the latest-ending one if
    several overlap."""
    playing = [s for s in segments if s.start < t < s.end]
    return max(playing, key=lambda s: s.end) if playing else None


def stopped_early(segment: SpeakerSegment) -> bool:
    """The speaker stopped before the end of its text by itself (yielded, or stopped on
    noise), not because the call ended."""
    return segment.interrupted and segment.cut_reason != "call_end"


def _cut_by_end(timeline: Timeline, segment: SpeakerSegment) -> bool:
    if segment.cut_reason == "call_end":
        return True
    end = timeline.end
    return end is not None and not segment.interrupted and segment.end >= end.t - SAME_INSTANT_S


def barge_ins(timeline: Timeline) -> list[BargeIn]:
    """Every caller floor segment that started while the agent spoke, in time order."""
    agent = floor_speech(timeline, "assistant")
    found: list[BargeIn] = []
    for seg in floor_speech(timeline, "user"):
        over = _playing_at(agent, seg.start)
        if over is None:
            continue
        found.append(
            BargeIn(
                turn=seg.turn,
                start=seg.start,
                agent_start=over.start,
                agent_end=over.end,
                yielded=stopped_early(over),
                cut_by_call_end=_cut_by_end(timeline, over),
            )
        )
    return found


def heard_backchannels(timeline: Timeline) -> list[HeardBackchannel]:
    """The caller's backchannels in time order, each with the agent segment it was said over
    and whether the agent wrongly yielded to it."""
    agent = floor_speech(timeline, "assistant")
    caller_floor = floor_speech(timeline, "user")
    said = backchannels(timeline, "user")
    yielded_to: set[int] = set()  # indices into ``said``
    for a in agent:
        if not stopped_early(a) or any(a.start < u.start < a.end for u in caller_floor):
            continue  # it ran to its end, or a real barge-in explains the stop
        if a.cut_reason is not None and a.cut_reason != "backchannel":
            continue  # recorded: something else was on the line when it stopped
        before_stop = [i for i, b in enumerate(said) if a.start < b.start < a.end]
        if before_stop:
            yielded_to.add(before_stop[-1])
    heard: list[HeardBackchannel] = []
    for i, b in enumerate(said):
        over = _playing_at(agent, b.start)
        heard.append(
            HeardBackchannel(
                start=b.start,
                end=b.end,
                agent_span=None if over is None else (over.start, over.end),
                agent_yielded=i in yielded_to,
            )
        )
    return heard


@dataclass(frozen=True)
class FalseYield:
    """An agent segment that stopped early with no caller speech on the line (noise,
    background talk, a cough, or the agent's own doing)."""

    start: float
    stop: float
    intended_text: str
    spoken_text: str


def false_yields(timeline: Timeline) -> list[FalseYield]:
    """The agent's early stops with no caller speech, backchannels included, in the
    ``CAUSE_WINDOW_S`` before the stop (within the segment), in time order."""
    caller = timeline.speech("user")
    found: list[FalseYield] = []
    for a in floor_speech(timeline, "assistant"):
        if not stopped_early(a):
            continue
        since = max(a.start, a.end - CAUSE_WINDOW_S)
        if any(u.start < a.end and u.end > since for u in caller):
            continue
        found.append(FalseYield(a.start, a.end, a.intended_text, a.spoken_text))
    return found


def caller_pauses(timeline: Timeline) -> list[CallerPause]:
    """The silences inside caller turns (between consecutive floor segments that carry the
    same caller turn number), in time order, with what the agent did in each."""
    agent = floor_speech(timeline, "assistant")
    by_turn: dict[int, list[SpeakerSegment]] = {}
    for seg in floor_speech(timeline, "user"):
        by_turn.setdefault(seg.turn, []).append(seg)
    pauses: list[CallerPause] = []
    for turn, segs in by_turn.items():
        for before, after in pairwise(segs):
            start, end = before.end, after.start
            if end - start <= SAME_INSTANT_S:
                continue  # touching or overlapping pieces: no silence to wait out
            onsets = [a.start for a in agent if start <= a.start < after.end]
            speaking = any(a.start < start < a.end for a in agent)
            onset = min(onsets, default=None)
            pauses.append(CallerPause(turn, start, end, after.end, onset, speaking))
    return sorted(pauses, key=lambda p: p.start)


def union(spans: list[Span]) -> list[Span]:
    """The spans merged into disjoint ones, in order."""
    merged: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def covered_s(spans: list[Span]) -> float:
    """Seconds covered by at least one span."""
    return sum(end - start for start, end in union(spans))


def overlap_s(a: list[Span], b: list[Span]) -> float:
    """Seconds covered by both a span of ``a`` and a span of ``b``."""
    total = 0.0
    for a_start, a_end in union(a):
        for b_start, b_end in union(b):
            total += max(0.0, min(a_end, b_end) - max(a_start, b_start))
    return total


def spans(segments: list[SpeakerSegment]) -> list[Span]:
    return [(s.start, s.end) for s in segments]
