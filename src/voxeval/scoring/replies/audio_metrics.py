"""Metrics of the reply audio itself: predicted MOS, WER against the system's own text channel,
duration, speaking rate and the spoken-language check (the same verdict gates the checklist
judge: see ``voxeval.scoring.replies.checklist``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from voxeval.audio import Audio
from voxeval.scoring.metric import DESCRIPTIVE, FailureValue, metric
from voxeval.scoring.replies.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.word_errors import word_errors

_TOKEN = re.compile(r"\w+(?:'\w+)?")


_NO_AUDIO = "the reply has no audio"


def _reply_audio(record: ReplyRecord) -> Audio | None:
    audio = record.reply_audio
    return None if audio is None or audio.is_empty() else audio


def _no_audio(record: ReplyRecord) -> Score | None:
    return Score.not_run(_NO_AUDIO) if _reply_audio(record) is None else None


AudioMetric = Callable[[ReplyRecord, ScoringResources, Audio], Score]


def _needs_audio(metric: AudioMetric) -> Callable[[ReplyRecord, ScoringResources], Score]:
    """A metric of the reply audio: not run without audio, else given the audio itself."""

    @functools.wraps(metric)
    def run(record: ReplyRecord, resources: ScoringResources) -> Score:
        audio = _reply_audio(record)
        if audio is None:
            return Score.not_run(_NO_AUDIO)
        return metric(record, resources, audio)

    return run


@metric(
    "mos",
    better="higher",
    failure=FailureValue(1.0, None, "the minimum of the 1-5 MOS scale"),
    protocols=("single_turn",),
)
@_needs_audio
def mos_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    result = resources.mos().predict(audio)
    return Score(value=result.overall, details={"model": result.model, **result.scores})


@metric(
    "wer",
    better="lower",
    failure=FailureValue(1.0, None, "every word of the text channel missing from the speech"),
    protocols=("single_turn",),
)
def wer_score(record: ReplyRecord, resources: ScoringResources) -> Score:
    """Word error rate of the reply audio's (greedy) transcript against the text the system
    says it spoke; measures how faithfully its speech carries its text. Both sides go through
    the normaliser of the expected language. ``errors`` and ``ref_words`` in the details let
    a summary pool replies into a corpus WER (sum of errors / sum of reference words)."""
    if not (record.reply_text or "").strip():
        return Score.not_run("the system has no text channel to compare the speech with")
    missing = _no_audio(record)
    if missing is not None:
        return missing
    counts = word_errors(
        record.reply_text or "", resources.transcripts(record).greedy, record.expected_language
    )
    if counts.wer is None:
        return Score.not_run("the text channel is empty after normalisation")
    details: dict[str, Any] = {
        "errors": counts.errors,
        "ref_words": counts.ref_words,
        "substitutions": counts.substitutions,
        "deletions": counts.deletions,
        "insertions": counts.insertions,
        "reference": counts.reference,
        "hypothesis": counts.hypothesis,
    }
    return Score(value=counts.wer, details=details)


@metric("duration", better=None, failure=DESCRIPTIVE, protocols=("single_turn",))
@_needs_audio
def duration_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    return Score(value=audio.duration, details={"unit": "s"})


@metric("speaking_rate", better=None, failure=DESCRIPTIVE, protocols=("single_turn",))
@_needs_audio
def speaking_rate_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    """Words per minute of the greedy transcript over the whole reply duration."""
    words = len(_TOKEN.findall(resources.transcripts(record).greedy))
    minutes = audio.duration / 60.0
    return Score(value=words / minutes, details={"words": words, "unit": "words/min"})


@metric("language", better="higher", failure=DESCRIPTIVE, protocols=("single_turn",))
@_needs_audio
def language_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    """1.0 when the reply audio is spoken in the expected language, else 0.0, identified by a
    spoken-language identifier (multilingual Whisper base). Not run, with the reason, when
    no identifier is available: never a default verdict."""
    verdict = resources.reply_language(record)
    ok = verdict.in_expected_language
    details = verdict.details()
    if not ok:
        details["reason"] = verdict.reason()
    return Score(value=1.0 if ok else 0.0, passed=ok, details=details)
