"""The simulated caller's timing beside human conversation: how long after the agent's turn
ends the caller starts its own (response offset; negative = it started in overlap), the
silences inside its turns (pauses between the pieces of one turn) and how often it
backchannels while the agent speaks.

Human reference figures (``HUMAN_REFERENCE``):

* Response offsets: across ten languages the most common offset is about 200 ms and the
  per-language means run from 7 ms (Japanese) to 469 ms (Danish) (Stivers et al. 2009, PNAS
  106(26)); the review of Levinson & Torreira 2015 (Frontiers in Psychology 6:731) puts the
  mode of turn transitions at around 200 ms, with gaps and overlaps both common.
* Pauses inside a turn: roughly log-normal, mostly 0.2-1 s (Campione & Véronis 2002; Heldner &
  Edlund 2010); above about 1 s listeners treat a silence as trouble (Jefferson 1989).
* Backchannels: very roughly one per 5-20 s of the other party's speech in English telephone
  conversation, i.e. 3-12 per minute (Switchboard: Jurafsky et al. 1997; Ward & Tsukahara 2000).

A run's figures lie in the human range when the mean offset is within the per-language means,
the modal offset within ``MODE_BAND_S`` of 200 ms, the median pause within 0.2-1 s and the
backchannel rate within 3-12 per minute. Personas that are slow on purpose (``elderly_slow``)
are expected outside it; the report says so rather than hiding it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from voxeval.simulation.timeline import SpeakerSegment, Timeline

MODE_BIN_S = 0.05  # the modal offset is the centre of the fullest 50 ms bin
MODE_BAND_S = 0.15  # modal offsets within 200 +- 150 ms count as "near 200 ms"

HUMAN_REFERENCE: dict[str, dict[str, Any]] = {
    "response_offset_s": {
        "mode": 0.2,
        "mean_range": [0.007, 0.469],
        "source": "Stivers et al. 2009 (10 languages); Levinson & Torreira 2015",
    },
    "pause_s": {
        "median_range": [0.2, 1.0],
        "source": "Campione & Veronis 2002; Heldner & Edlund 2010",
    },
    "backchannels_per_min": {
        "range": [3.0, 12.0],
        "source": "Jurafsky et al. 1997 (Switchboard); Ward & Tsukahara 2000",
    },
}


@dataclass
class CallerTiming:
    """Timing figures of one or more calls (lists pool across calls)."""

    response_offsets_s: list[float] = field(default_factory=list)
    pauses_s: list[float] = field(default_factory=list)
    backchannels: int = 0
    agent_speech_s: float = 0.0
    calls: int = 0

    def add(self, other: CallerTiming) -> None:
        self.response_offsets_s += other.response_offsets_s
        self.pauses_s += other.pauses_s
        self.backchannels += other.backchannels
        self.agent_speech_s += other.agent_speech_s
        self.calls += other.calls


def caller_timing(timeline: Timeline) -> CallerTiming:
    """The caller's response offsets, pauses and backchannels in one call.

    A caller turn's offset is counted when the last thing on the floor before it started was
    an agent utterance (not the call's opening, nor a caller turn the agent never answered):
    offset = caller turn start - that utterance's end (negative when the caller started while
    the agent still spoke: a barge-in or an overlap). Pauses are the silences between
    consecutive pieces of the same caller turn."""
    agent = [s for s in timeline.speech("assistant") if not s.backchannel]
    caller = [s for s in timeline.speech("user") if not s.backchannel]
    turn_starts: list[SpeakerSegment] = []
    pauses: list[float] = []
    previous: SpeakerSegment | None = None
    for seg in caller:
        if previous is not None and seg.turn == previous.turn:
            pauses.append(seg.start - previous.end)
        else:
            turn_starts.append(seg)
        previous = seg
    offsets: list[float] = []
    for n, turn in enumerate(turn_starts):
        before = [a for a in agent if a.start < turn.start]
        if not before:
            continue
        last = max(before, key=lambda a: a.start)
        prior_caller = turn_starts[n - 1].start if n else float("-inf")
        if prior_caller > last.start:  # the caller spoke since: not an answer to it
            continue
        offsets.append(turn.start - last.end)
    return CallerTiming(
        response_offsets_s=offsets,
        pauses_s=pauses,
        backchannels=sum(1 for s in timeline.speech("user") if s.backchannel),
        agent_speech_s=sum(max(0.0, a.end - a.start) for a in agent),
        calls=1,
    )


def pooled(timelines: Iterable[Timeline]) -> CallerTiming:
    total = CallerTiming()
    for timeline in timelines:
        total.add(caller_timing(timeline))
    return total


class Distribution(TypedDict, total=False):
    """``n`` always; the figures only when there is a value; ``mode`` added for offsets."""

    n: int
    mean: float
    median: float
    p10: float
    p90: float
    overlap_share: float
    mode: float | None


def distribution(values: Sequence[float]) -> Distribution:
    """n, mean, median, 10th/90th percentiles and the share below zero (overlaps)."""
    if not values:
        return {"n": 0}
    data = np.asarray(values, dtype=float)
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "median": float(np.median(data)),
        "p10": float(np.percentile(data, 10)),
        "p90": float(np.percentile(data, 90)),
        "overlap_share": float((data < 0).mean()),
    }


def modal_value(values: Sequence[float], bin_s: float = MODE_BIN_S) -> float | None:
    """Centre of the fullest ``bin_s`` bin (bins start at multiples of ``bin_s``; the earliest
    of equally full bins)."""
    if not values:
        return None
    # rounded first: 0.2 / 0.05 must fall in bin 4, not 3.9999...
    bins = np.floor(np.round(np.asarray(values, dtype=float) / bin_s, 9)).astype(int)
    labels, counts = np.unique(bins, return_counts=True)
    return float((labels[int(np.argmax(counts))] + 0.5) * bin_s)


def timing_summary(timing: CallerTiming) -> dict[str, Any]:
    """The figures of ``timing`` beside the human reference, with an in-range verdict per
    figure (None when there is nothing to judge)."""
    offsets = distribution(timing.response_offsets_s)
    offsets["mode"] = modal_value(timing.response_offsets_s)
    pauses = distribution(timing.pauses_s)
    minutes = timing.agent_speech_s / 60
    rate = timing.backchannels / minutes if minutes > 0 else None
    ref = HUMAN_REFERENCE
    lo, hi = ref["response_offset_s"]["mean_range"]
    in_range = {
        "offset_mean": None if offsets["n"] == 0 else lo <= offsets["mean"] <= hi,
        "offset_mode": (
            None
            if offsets["mode"] is None
            else abs(offsets["mode"] - ref["response_offset_s"]["mode"]) <= MODE_BAND_S
        ),
        "pause_median": (
            None if pauses["n"] == 0 else _within(pauses["median"], ref["pause_s"]["median_range"])
        ),
        "backchannel_rate": None
        if rate is None
        else _within(rate, ref["backchannels_per_min"]["range"]),
    }
    return {
        "calls": timing.calls,
        "response_offset_s": offsets,
        "pause_s": pauses,
        "backchannels": timing.backchannels,
        "agent_speech_s": timing.agent_speech_s,
        "backchannels_per_min": rate,
        "in_human_range": in_range,
        "human_reference": HUMAN_REFERENCE,
    }


def _within(value: float, bounds: Sequence[float]) -> bool:
    return bounds[0] <= value <= bounds[1]
