"""Metrics of the reply audio itself: predicted MOS, WER against the system's own text channel,
duration, speaking rate and a language check (its own field; it never changes other scores).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from voxeval.audio import Audio
from voxeval.registry import register
from voxeval.scoring.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.word_errors import word_errors

# Frequent English function words; running English text is ~40-50% of them, other languages
# written in Latin script well under 15%. Enough to flag a reply in the wrong language.
_FUNCTION_WORDS_TEXT = """
    a about after all also an and any are as at be because been but by can could do does
    for from had has have he her here him his how i if in into is it its just like me more my
    no not now of on one or our out she so some than that the their them then there these they
    this to up us was we were what when where which who will with would you your yes"""
_ENGLISH_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
ENGLISH_MIN_SHARE = 0.2
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
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


@register("metric", "mos")
@_needs_audio
def mos_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    result = resources.mos().predict(audio)
    return Score(value=result.overall, details={"model": result.model, **result.scores})


@register("metric", "wer")
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


@register("metric", "duration")
@_needs_audio
def duration_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    return Score(value=audio.duration, details={"unit": "s"})


@register("metric", "speaking_rate")
@_needs_audio
def speaking_rate_score(record: ReplyRecord, resources: ScoringResources, audio: Audio) -> Score:
    """Words per minute of the greedy transcript over the whole reply duration."""
    words = len(_TOKEN.findall(resources.transcripts(record).greedy))
    minutes = audio.duration / 60.0
    return Score(value=words / minutes, details={"words": words, "unit": "words/min"})


def english_share(text: str) -> tuple[float, int]:
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return 0.0, 0
    return sum(w in _ENGLISH_FUNCTION_WORDS for w in words) / len(words), len(words)


@register("metric", "language")
def language_score(record: ReplyRecord, resources: ScoringResources) -> Score:
    """1.0 when the reply is in the expected language, else 0.0 (reported on its own)."""
    if record.expected_language != "en":
        return Score.not_run(
            f"the language check only knows English; expected {record.expected_language!r}"
        )
    missing = _no_audio(record)
    if missing is not None:
        return missing
    transcripts = resources.transcripts(record)
    share, n = english_share(transcripts.greedy)
    if n < 3:
        return Score.not_run("the reply transcript has fewer than 3 words", words=n)
    ok = share >= ENGLISH_MIN_SHARE
    return Score(
        value=1.0 if ok else 0.0,
        passed=ok,
        details={
            "expected": "en",
            "function_word_share": round(share, 3),
            "words": n,
            "transcripts_rejected": transcripts.rejected,
        },
    )
