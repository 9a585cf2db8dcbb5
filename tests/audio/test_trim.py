from __future__ import annotations

import numpy as np
import pytest

from tests.audio.helpers import sine
from voxeval.audio import Audio, concatenate, speech_bounds, trim_silence
from voxeval.errors import AudioError


def test_trim_removes_leading_and_trailing_silence_with_padding() -> None:
    clip = concatenate([Audio.silence(1.0), sine(seconds=0.5), Audio.silence(0.7)])
    bounds = speech_bounds(clip)
    assert bounds is not None
    assert bounds[0] == pytest.approx(1.0, abs=0.011)
    assert bounds[1] == pytest.approx(1.5, abs=0.011)
    trimmed = trim_silence(clip, pad_s=0.1)
    assert trimmed.duration == pytest.approx(0.7, abs=0.02)


def test_quiet_noise_floor_counts_as_silence() -> None:
    floor = Audio(np.full(16000, 1e-4, dtype=np.float32), 16000)
    clip = concatenate([floor, sine(seconds=0.5), floor])
    assert trim_silence(clip, -40.0, pad_s=0.0).duration == pytest.approx(0.5, abs=0.011)


def test_all_silence_trims_to_empty_and_empty_input_raises() -> None:
    assert trim_silence(Audio.silence(1.0)).is_empty()
    with pytest.raises(AudioError, match="needs non-empty audio"):
        trim_silence(Audio(np.zeros(0, dtype=np.float32), 16000))
    with pytest.raises(AudioError, match="pad_s must be in"):
        trim_silence(sine(), pad_s=-1.0)
