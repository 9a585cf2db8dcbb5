"""The timeline's speech segments of a call: the agent's utterances and the caller's pieces,
with why each one was cut (if it was)."""

from __future__ import annotations

from collections.abc import Sequence

from voxeval.simulation.call_engine.agent_speech import Spoken
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.line import LinePiece
from voxeval.simulation.timeline import SpeakerSegment
from voxeval.simulation.turn_detection import words_spoken

# An agent's early stop is put down to the caller speech on the line in this many seconds
# before it (an adapted agent stops within its interruption policy's duration and word checks).
CUT_CAUSE_S = 2.0


def cut_reason(pieces: Sequence[LinePiece], grid: FrameGrid, onset: int, stop: int) -> str:
    """Why the agent stopped at ``stop``: what the caller had on the line (``pieces``) in the
    ``CUT_CAUSE_S`` before it (within the utterance)."""
    since = max(onset, stop - grid.samples(CUT_CAUSE_S))
    near = [p for p in pieces if p.start < stop and p.end > since]
    if any(not p.backchannel for p in near):
        return "caller_speech"
    return "backchannel" if near else "no_caller_speech"


def speech_segments(
    spoken: Sequence[Spoken],
    pieces: Sequence[LinePiece],
    grid: FrameGrid,
    t_end: float | None = None,
) -> list[SpeakerSegment]:
    """The call's speech segments: the agent's ``spoken`` utterances, then the caller's line
    ``pieces``; ``t_end``: when the call ended (speech still running then is marked cut by
    the call's end)."""
    end_at = None if t_end is None else grid.samples(t_end)
    segs: list[SpeakerSegment] = []
    for s in spoken:
        text = s.turn.text or ""
        reason: str | None = None
        if s.stop is not None:
            reason = cut_reason(pieces, grid, s.onset, s.stop)
        elif end_at is not None and s.onset + s.length > end_at:
            reason = "call_end"
        said = ""
        if reason is not None:
            stop = s.end if end_at is None else min(s.end, end_at)
            said = words_spoken(text, (stop - s.onset) / s.length if s.length else 1.0)
        segs.append(
            SpeakerSegment(
                "assistant",
                grid.s(s.onset),
                grid.s(s.end),
                s.index,
                intended_text=text,
                transcript=s.transcript,
                interrupted=reason is not None,
                backchannel=s.turn.backchannel,
                cut_reason=reason,
                spoken_text=said,
            )
        )
    for p in pieces:
        reason = None
        if p.cut is not None and p.cut < p.start + p.length:
            reason = "talked_over"
        elif end_at is not None and p.start < end_at < p.end:
            reason = "call_end"
        said = ""
        if reason == "talked_over":
            said = p.spoken_text()
        elif reason == "call_end" and end_at is not None:
            said = words_spoken(p.text, (end_at - p.start) / p.length)
        segs.append(
            SpeakerSegment(
                "user",
                grid.s(p.start),
                grid.s(p.end),
                p.turn,
                intended_text=p.text,
                transcript=p.transcript,
                interrupted=reason is not None,
                backchannel=p.backchannel,
                cut_reason=reason,
                spoken_text=said,
            )
        )
    return segs
