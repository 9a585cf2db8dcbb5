"""Input checks shared by the audio operations; every error names the audio's source."""

from __future__ import annotations

import math

from voxeval.audio.resample import resample
from voxeval.audio.value import Audio
from voxeval.errors import AudioError


def require_samples(audio: Audio, operation: str) -> None:
    """Raise if ``audio`` has no samples (``operation`` names what needed them)."""
    if audio.is_empty():
        raise AudioError(f"{audio.source}: {operation} needs non-empty audio, got 0 samples")


def require_finite(value: float, name: str, where: str) -> float:
    """Return ``value`` as float; raise if it is NaN or infinite."""
    number = float(value)
    if not math.isfinite(number):
        raise AudioError(f"{where}: {name} must be a finite number, got {value!r}")
    return number


def require_range(value: float, name: str, where: str, low: float, high: float) -> float:
    """Return ``value`` as float; raise unless ``low <= value <= high`` (and finite)."""
    number = require_finite(value, name, where)
    if not low <= number <= high:
        raise AudioError(f"{where}: {name} must be in [{low}, {high}], got {value!r}")
    return number


def at_rate(audio: Audio, rate: int) -> Audio:
    """``audio`` at ``rate`` Hz: resampled (soxr, high quality) when the rates differ."""
    return audio if audio.rate == rate else resample(audio, rate)
