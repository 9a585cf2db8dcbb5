"""Which speech segments of a call hold the floor.

A backchannel ("mm-hm", "right") is a listener's acknowledgement said while the other party
talks: it is not a turn, does not ask the speaker to stop and needs no answer. Every consumer
that numbers turns, looks for barge-ins or lists utterances to answer reads the floor speech
only; the backchannels are read on their own (``backchannel_rate``)."""

from __future__ import annotations

from voxeval.simulation.timeline import Speaker, SpeakerSegment, Timeline


def floor_speech(timeline: Timeline, speaker: Speaker) -> list[SpeakerSegment]:
    """The party's speech without its backchannels, in start order."""
    return [s for s in timeline.speech(speaker) if not s.backchannel]


def backchannels(timeline: Timeline, speaker: Speaker) -> list[SpeakerSegment]:
    """The party's backchannels, in start order."""
    return [s for s in timeline.speech(speaker) if s.backchannel]
