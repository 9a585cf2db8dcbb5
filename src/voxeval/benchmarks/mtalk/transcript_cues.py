"""Warnings for dialogues whose cue a judge cannot perceive from what it is given.

The paralinguistic and ambient dimensions test whether a system notices how the user speaks
or what sounds around them: the cue is in the recording. A transcript carries it only as an
annotation (``<anxious tone>``, ``[phone ringing]``); the public MTalk-Bench transcriptions
carry none. So a judge reading transcripts cannot perceive the cue of an untagged dialogue,
and a judge hearing audio cannot perceive it in a turn whose recording is absent (that turn
is spoken from its transcript)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from voxeval.benchmarks.mtalk.dialogue import Dialogue

AUDIO_CUE_DIMENSIONS = ("paralinguistic", "ambient")
JudgedFrom = Literal["transcript", "audio"]


def _listed(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")


def cue_warnings(dialogues: Iterable[Dialogue], judged_from: JudgedFrom | None = None) -> list[str]:
    """One line per audio-cue dimension with dialogues whose cue the judge would miss:
    untagged transcripts (``judged_from="transcript"``), absent user recordings
    (``"audio"``), or both (None: not known yet, e.g. at import)."""
    out = []
    rows = list(dialogues)
    for dimension in AUDIO_CUE_DIMENSIONS:
        mine = [d for d in rows if d.dimension == dimension]
        if not mine:
            continue
        if judged_from in (None, "transcript"):
            untagged = [d.id for d in mine if not any(t.tags for t in d.turns)]
            if untagged:
                out.append(
                    f"{dimension}: {len(untagged)} of {len(mine)} dialogues have no tag in "
                    f"their transcripts ({_listed(untagged)}); the cue is only in the audio, so "
                    "a judge reading transcripts does not perceive it (judge them from audio)"
                )
        if judged_from in (None, "audio"):
            silent = [d.id for d in mine if any(t.audio is None for t in d.turns)]
            if silent:
                out.append(
                    f"{dimension}: {len(silent)} of {len(mine)} dialogues have user turns "
                    f"without a recording ({_listed(silent)}); an audio judge hears those "
                    "turns spoken from the transcript, without the cue"
                )
    return out
