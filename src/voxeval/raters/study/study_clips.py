"""Clips the study builder makes itself: the attention clip of gold items and the cue that
stands for a reply the system never gave.

An attention clip replaces a system's reply in a gold item. It is the embedded espeak-ng voice
saying, in plain words, that the clip is a check and what to answer; when espeak-ng is not
installed it is a train of beeps, which no listener could take for a reply. Either way the
right answer is known: in an arena item the other reply wins, in a rubric item no criterion is
met, in a score item the score is 1 or 2. The speech is deterministic (same text, same engine,
same bytes); the beeps are computed."""

from __future__ import annotations

import numpy as np

from voxeval.audio import Audio, concatenate, resample
from voxeval.errors import VoxevalError
from voxeval.providers.tts.tts_espeak import EspeakTTS, espeak_binary

CLIP_RATE = 16000
ARENA_ATTENTION = (
    "This is an attention check, not a real answer. Please choose the other reply as better."
)
JUDGE_ATTENTION = (
    "This is an attention check, not a real answer. Please tick no criteria "
    "and give the lowest score."
)
NO_REPLY_CUE = "No spoken response."


def beeps(seconds: float = 2.4, hz: float = 1000.0, rate: int = CLIP_RATE) -> Audio:
    """Alternating 0.2 s beeps and 0.2 s gaps at -10 dBFS."""
    t = np.arange(int(rate * seconds)) / rate
    gate = (np.floor(t / 0.2) % 2 == 0).astype(np.float32)
    return Audio((0.3 * gate * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def spoken(text: str) -> Audio | None:
    """``text`` in the embedded espeak-ng voice at the clip rate; None without espeak-ng."""
    if espeak_binary() is None:
        return None
    try:
        audio = EspeakTTS().synthesize(text)
    except VoxevalError:
        return None
    return resample(audio, CLIP_RATE) if audio.rate != CLIP_RATE else audio


def attention_clip(task: str) -> tuple[Audio, str]:
    """The clip and how it was made (``speech`` or ``beeps``)."""
    text = ARENA_ATTENTION if task == "arena" else JUDGE_ATTENTION
    speech = spoken(text)
    if speech is None:
        return beeps(), "beeps"
    lead = Audio.silence(0.3, CLIP_RATE)
    return concatenate([lead, speech, lead]), "speech"


def no_reply_clip() -> Audio:
    """What a page plays where the system gave no spoken reply (its failure stays visible to
    the rater instead of the item disappearing): the spoken cue, else a second of silence."""
    speech = spoken(NO_REPLY_CUE)
    return speech if speech is not None else Audio.silence(1.0, CLIP_RATE)
