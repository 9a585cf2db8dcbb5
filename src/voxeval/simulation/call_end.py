"""A call's recording ends where the call ends.

When a party hangs up (or the call times out, hits its duration limit or fails) the other
party may be in the middle of an utterance whose audio was already written to the bus. Nothing
after the end event was heard on the line, so it is not kept: speech segments that start at or
after the end are dropped, a segment still running at the end stops there, and every audio
track is cut at the end. Tool calls are kept as they happened: they ran, and the final database
shows their effect.
"""

from __future__ import annotations

from dataclasses import replace

from voxeval.audio import Audio
from voxeval.simulation.timeline import Timeline


def timeline_until_end(timeline: Timeline) -> Timeline:
    """``timeline`` with its speech cut at its end event (unchanged when it has none)."""
    if timeline.end is None:
        return timeline
    t_end = timeline.end.t
    segments = [
        seg if seg.end <= t_end else replace(seg, end=t_end)
        for seg in timeline.segments
        if seg.start < t_end
    ]
    return Timeline(segments=segments, tools=list(timeline.tools), end=timeline.end)


def track_until(track: Audio, t_end: float) -> Audio:
    """``track`` without the samples from ``t_end`` seconds on (unchanged when shorter)."""
    n = max(0, round(t_end * track.rate))
    return track if track.num_samples <= n else track.with_samples(track.samples[:n])
