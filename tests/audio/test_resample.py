from __future__ import annotations

import numpy as np
import pytest

from tests.audio.helpers import sine
from voxeval.audio import Audio, resample, rms
from voxeval.errors import AudioError


def test_resample_keeps_duration_frequency_and_level() -> None:
    tone = sine(440.0, 1.0, rate=22050)
    out = resample(tone, 16000)
    assert out.rate == 16000
    assert out.num_samples == 16000
    assert rms(out) == pytest.approx(rms(tone), rel=0.01)
    spectrum = np.abs(np.fft.rfft(out.samples))
    assert np.argmax(spectrum) == 440  # 1 Hz bins for a 1 s signal


def test_same_rate_and_empty() -> None:
    tone = sine()
    assert resample(tone, 16000) is tone
    assert resample(Audio(np.zeros(0, dtype=np.float32), 8000), 16000).is_empty()


def test_bad_target_rate() -> None:
    with pytest.raises(AudioError, match="cannot resample to 5 Hz"):
        resample(sine(), 5)
