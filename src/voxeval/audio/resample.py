"""Sample-rate conversion with soxr."""

from __future__ import annotations

import numpy as np
import soxr

from voxeval.audio.value import MAX_RATE, MIN_RATE, Audio
from voxeval.errors import AudioError


def resample(audio: Audio, rate: int, *, quality: str = "HQ") -> Audio:
    """Return ``audio`` at ``rate`` Hz (soxr; ``quality`` one of QQ, LQ, MQ, HQ, VHQ).

    Empty audio stays empty; the same rate returns the value unchanged.
    """
    rate = int(rate)
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioError(f"{audio.source}: cannot resample to {rate} Hz (out of range)")
    if rate == audio.rate:
        return audio
    if audio.is_empty():
        return Audio(np.zeros(0, dtype=np.float32), rate, audio.source)
    out = soxr.resample(audio.samples, audio.rate, rate, quality=quality)
    return Audio(np.asarray(out, dtype=np.float32), rate, audio.source)
