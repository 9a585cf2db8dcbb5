"""Which speech segments of a call hold the floor.

A backchannel ("mm-hm", "right") is a listener's acknowledgement said while the other party
talks: it is not a turn, does not ask the speaker to stop and needs no answer. Every consumer
that numbers turns, looks for barge-ins or lists utterances to answer reads the floor speech
only; the backchannels are read on their own (``backchannel_rate``)."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.simulation.timeline import Speaker, SpeakerSegment, Timeline


def floor_speech(timeline: Timeline, speaker: Speaker) -> list[SpeakerSegment]:
    """The party's speech without its backchannels, in start order."""
    return [s for s in timeline.speech(speaker) if not s.backchannel]


def backchannels(timeline: Timeline, speaker: Speaker) -> list[SpeakerSegment]:
    """The party's backchannels, in start order."""
    return [s for s in timeline.speech(speaker) if s.backchannel]


@dataclass(frozen=True)
class TurnText:
    """One party's floor turn, its pieces (a caller turn split at pauses) joined: the words
    that went out on the line (``said``: the spoken part of a piece that was cut) and the
    other party's transcript of the turn (kept on its first piece)."""

    turn: int
    start: float
    end: float
    said: str
    transcript: str


def turn_texts(timeline: Timeline, speaker: Speaker) -> list[TurnText]:
    """The party's floor turns in order, each with the text of all its pieces."""
    by_turn: dict[int, list[SpeakerSegment]] = {}
    for seg in floor_speech(timeline, speaker):
        by_turn.setdefault(seg.turn, []).append(seg)
    return [
        TurnText(
            turn=turn,
            start=min(s.start for s in segs),
            end=max(s.end for s in segs),
            said=" ".join(s.said_text.strip() for s in segs if s.said_text.strip()),
            transcript=" ".join(s.transcript.strip() for s in segs if s.transcript.strip()),
        )
        for turn, segs in sorted(by_turn.items())
    ]
