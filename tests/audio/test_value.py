from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.errors import AudioError


def test_audio_is_float32_mono_read_only() -> None:
    audio = Audio(np.array([0, 1, -1], dtype=np.int16).astype(np.float64), 8000, source="x")
    assert audio.samples.dtype == np.float32
    assert audio.duration == pytest.approx(3 / 8000)
    with pytest.raises(ValueError):
        audio.samples[0] = 0.5


def test_rejects_nan_with_source_named() -> None:
    with pytest.raises(AudioError, match=r"clip\.wav.*NaN"):
        Audio(np.array([0.0, np.nan], dtype=np.float32), 16000, source="clip.wav")


def test_rejects_multichannel_and_bad_rate() -> None:
    with pytest.raises(AudioError, match="mono"):
        Audio(np.zeros((10, 2), dtype=np.float32), 16000)
    with pytest.raises(AudioError, match="sample rate"):
        Audio(np.zeros(10, dtype=np.float32), 10)


def test_rejects_absurd_length() -> None:
    with pytest.raises(AudioError, match="long"):
        Audio(np.zeros(5 * 3600 * 1000, dtype=np.float32), 1000, source="huge")


def test_slice_and_equality() -> None:
    audio = Audio(np.arange(1000, dtype=np.float32) / 1000, 1000)
    part = audio.slice(0.1, 0.2)
    assert part.num_samples == 100
    assert float(part.samples[0]) == pytest.approx(0.1)
    assert audio == Audio(np.arange(1000, dtype=np.float32) / 1000, 1000)
    assert audio.slice(2.0).is_empty()


def test_silence_duration_checked() -> None:
    assert Audio.silence(0.5, 8000).num_samples == 4000
    with pytest.raises(AudioError, match="seconds must be in"):
        Audio.silence(-1.0)
