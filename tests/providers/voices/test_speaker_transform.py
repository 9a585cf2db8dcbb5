"""Speaker transforms change pitch, formants and tempo by the requested amounts."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.errors import ConfigError
from voxeval.providers.voices.speaker_transform import IDENTITY, SpeakerTransform, apply_transform

RATE = 16000


def vowel(f0: float = 150.0, seconds: float = 1.5) -> Audio:
    """A steady harmonic sound with a formant-like spectral peak near 700 Hz."""
    t = np.arange(int(seconds * RATE)) / RATE
    harmonics = np.arange(1, int(4000 / f0))
    amps = np.exp(-(((harmonics * f0) - 700.0) ** 2) / (2 * 300.0**2)) + 0.05
    y = sum(a * np.sin(2 * np.pi * h * f0 * t) for h, a in zip(harmonics, amps, strict=True))
    y = 0.5 * y / np.max(np.abs(y))
    return Audio(y.astype(np.float32), RATE)


def median_f0(audio: Audio) -> float:
    import librosa

    f0 = librosa.yin(audio.samples, fmin=60, fmax=500, sr=audio.rate, frame_length=2048)
    return float(np.median(f0[5:-5]))


def spectral_centroid(audio: Audio) -> float:
    import librosa

    return float(np.median(librosa.feature.spectral_centroid(y=audio.samples, sr=audio.rate)))


def test_pitch_shift_moves_f0_by_the_requested_semitones() -> None:
    src = vowel(150.0)
    assert median_f0(src) == pytest.approx(150.0, rel=0.02)
    up = apply_transform(src, SpeakerTransform(pitch_semitones=4.0, formant_ratio=2 ** (4 / 12)))
    assert median_f0(up) == pytest.approx(150.0 * 2 ** (4 / 12), rel=0.03)
    down = apply_transform(
        src, SpeakerTransform(pitch_semitones=-3.0, formant_ratio=2 ** (-3 / 12))
    )
    assert median_f0(down) == pytest.approx(150.0 * 2 ** (-3 / 12), rel=0.03)
    assert up.duration == pytest.approx(src.duration, abs=0.01)


def test_formant_shift_keeps_pitch_and_moves_the_spectrum() -> None:
    src = vowel(150.0)
    brighter = apply_transform(src, SpeakerTransform(formant_ratio=1.2))
    assert median_f0(brighter) == pytest.approx(150.0, rel=0.03)
    assert spectral_centroid(brighter) > 1.1 * spectral_centroid(src)
    darker = apply_transform(src, SpeakerTransform(formant_ratio=0.85))
    assert spectral_centroid(darker) < 0.95 * spectral_centroid(src)


def test_pitch_only_shift_keeps_formants() -> None:
    src = vowel(150.0)
    shifted = apply_transform(src, SpeakerTransform(pitch_semitones=4.0))  # formant_ratio 1
    assert median_f0(shifted) == pytest.approx(150.0 * 2 ** (4 / 12), rel=0.03)
    assert spectral_centroid(shifted) == pytest.approx(spectral_centroid(src), rel=0.12)


def test_tempo_changes_duration_not_pitch() -> None:
    src = vowel(150.0)
    slow = apply_transform(src, SpeakerTransform(tempo=0.8))
    assert slow.duration == pytest.approx(src.duration / 0.8, rel=0.02)
    assert median_f0(slow) == pytest.approx(150.0, rel=0.02)


def test_identity_returns_input_and_limits_are_checked() -> None:
    src = vowel()
    assert apply_transform(src, IDENTITY) is src
    assert IDENTITY.describe() == "none"
    assert "pitch +2.0 st" in SpeakerTransform(pitch_semitones=2).describe()
    with pytest.raises(ConfigError, match="pitch_semitones"):
        SpeakerTransform(pitch_semitones=20)
    with pytest.raises(ConfigError, match="tempo"):
        SpeakerTransform(tempo=0.1)


def test_varispeed_pitch_moves_f0_and_shortens_by_the_same_factor() -> None:
    src = vowel(150.0)
    factor = 2 ** (2 / 12)
    shifted = SpeakerTransform(pitch_semitones=2.0, formant_ratio=factor)
    out = shifted.apply(src, varispeed_pitch=True)
    assert out.rate == src.rate
    assert median_f0(out) == pytest.approx(150.0 * factor, rel=0.02)
    # a resampling: the caller synthesizes that much slower to keep the profile's tempo
    assert out.duration == pytest.approx(src.duration / factor, rel=0.01)
    vocoder = shifted.apply(src)
    assert vocoder.duration == pytest.approx(src.duration, abs=0.01)
