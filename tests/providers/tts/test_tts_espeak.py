"""espeak-ng voices through the Debian binary."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers import availability, create_provider
from voxeval.providers.tts.tts_espeak import (
    ESPEAK_ACCENTS,
    ESPEAK_OTHER_LANGUAGES,
    espeak_catalogue,
)

needs_espeak = pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="espeak")).available,
    reason="espeak-ng is not installed",
)


def median_f0(samples: np.ndarray, rate: int) -> float:
    import librosa

    f0, voiced, _ = librosa.pyin(samples, fmin=60, fmax=400, sr=rate)
    return float(np.nanmedian(f0[voiced]))


def test_catalogue_covers_accents_and_variants() -> None:
    voices = espeak_catalogue()
    assert len(voices) == (8 + 2) * 15
    other_accents = {accent for _, accent in ESPEAK_OTHER_LANGUAGES.values()}
    assert {v.accent for v in voices} == set(ESPEAK_ACCENTS.values()) | other_accents
    assert {v.language for v in voices if v.accent in other_accents} == {"es"}
    assert {v.language for v in voices if v.accent in ESPEAK_ACCENTS.values()} == {"en"}
    scot = next(v for v in voices if v.name == "espeak:en-gb-scotland+f3")
    assert (scot.gender, scot.age, scot.accent) == ("female", "adult", "scottish")
    assert next(v for v in voices if v.name.endswith("+grandpa")).age == "senior"


@needs_espeak
def test_espeak_voices_speak_with_their_own_pitch() -> None:
    tts = create_provider("tts", "espeak")
    male = tts.synthesize("The quick brown fox jumps over the lazy dog.", voice="en-us+m3")
    female = tts.synthesize("The quick brown fox jumps over the lazy dog.", voice="espeak:en-gb+f3")
    assert male.rate == female.rate == 22050
    assert male.duration > 1.0 and female.duration > 1.0
    assert median_f0(female.samples, female.rate) > 1.3 * median_f0(male.samples, male.rate)


@needs_espeak
def test_espeak_speed_option_and_bad_voice() -> None:
    slow = create_provider("tts", {"provider": "espeak", "speed": 100}).synthesize(
        "one two three four"
    )
    fast = create_provider("tts", {"provider": "espeak", "speed": 300}).synthesize(
        "one two three four"
    )
    assert slow.duration > 1.8 * fast.duration
    with pytest.raises(ConfigError, match="unknown voice"):
        create_provider("tts", "espeak").synthesize("hi", voice="en-xx")
    with pytest.raises(ConfigError, match="pitch"):
        create_provider("tts", {"provider": "espeak", "pitch": 150})
