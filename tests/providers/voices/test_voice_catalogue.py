"""Voice catalogue, speaker profiles and voice selection."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers import availability
from voxeval.providers.tts.tts_piper import PIPER_VOICES
from voxeval.providers.voices.voice_catalogue import (
    AGES,
    GENDERS,
    TIMBRES,
    SpeakerProfile,
    rank_voices,
    render_speech,
    select_voice,
    voice_catalogue,
)


def _available(engine: str) -> bool:
    return availability("tts", ProviderSpec(provider=engine)).available


needs_debian_voices = pytest.mark.skipif(
    not (_available("espeak") and _available("flite")), reason="espeak-ng/flite not installed"
)


def test_profile_parsing_and_validation() -> None:
    p = SpeakerProfile.parse("female, senior, scottish, bright")
    assert p == SpeakerProfile("female", "senior", "scottish", "bright")
    assert SpeakerProfile.parse("adult,male").accent is None
    with pytest.raises(ConfigError, match="needs a gender"):
        SpeakerProfile.parse("senior,scottish")
    with pytest.raises(ConfigError, match="age"):
        SpeakerProfile("male", "toddler")
    with pytest.raises(ConfigError, match="two values"):
        SpeakerProfile.parse("male,female")


def test_exact_native_voice_needs_no_transform() -> None:
    joe = PIPER_VOICES["joe"]
    choice = select_voice(SpeakerProfile("male", "adult", "us", "dark"), [joe])
    assert choice.voice is joe
    assert choice.transform.is_identity
    # Only the quality term remains: 0.4 * (5 - 4.14) / 4
    assert choice.distance == pytest.approx(0.086, abs=1e-3)


def test_distance_grows_with_the_gap_to_the_profile() -> None:
    joe = [PIPER_VOICES["joe"]]
    adult = select_voice(SpeakerProfile("male", "adult"), joe)
    teen = select_voice(SpeakerProfile("male", "adolescent"), joe)
    woman = select_voice(SpeakerProfile("female", "adult"), joe)
    scot = select_voice(SpeakerProfile("male", "adult", "scottish"), joe)
    assert adult.distance < teen.distance < woman.distance
    assert scot.distance == pytest.approx(adult.distance + 1.0)
    assert "accent 'scottish' not available" in scot.explanation
    assert teen.transform.pitch_semitones > 3 and teen.transform.formant_ratio > 1.05
    assert woman.transform.pitch_semitones > 7


@needs_debian_voices
def test_sixteen_profiles_map_to_distinct_voice_transform_pairs() -> None:
    catalogue = voice_catalogue()
    pairs = {
        (c.voice.name, c.transform)
        for g in GENDERS
        for a in AGES
        for t in TIMBRES
        for c in [select_voice(SpeakerProfile(g, a, None, t), catalogue)]
    }
    assert len(pairs) == 16


@needs_debian_voices
def test_catalogue_and_accent_request() -> None:
    catalogue = voice_catalogue()
    engines = {v.engine for v in catalogue}
    assert {"espeak", "flite"} <= engines
    assert len({v.name for v in catalogue}) == len(catalogue)
    choice = select_voice(SpeakerProfile("female", "senior", "scottish"), catalogue)
    assert choice.voice.name == "espeak:en-gb-scotland+grandma"
    assert choice.transform.is_identity
    ranked = rank_voices(SpeakerProfile("male", "adult", "scottish"), catalogue)
    assert ranked[0].voice.accent == "scottish"
    assert [c.distance for c in ranked] == sorted(c.distance for c in ranked)


@pytest.mark.models
@needs_debian_voices
def test_rendered_child_profile_is_pitched_up() -> None:
    import librosa

    def f0(samples: np.ndarray, rate: int) -> float:
        track, voiced, _ = librosa.pyin(samples, fmin=60, fmax=500, sr=rate)
        return float(np.nanmedian(track[voiced]))

    text = "Can we go to the park after lunch, please?"
    choice = select_voice(SpeakerProfile("female", "child"))
    assert choice.transform.pitch_semitones > 2
    plain = render_speech(text, choice.voice.name)
    child = render_speech(text, choice)
    expected = 2 ** (choice.transform.pitch_semitones / 12)
    measured = f0(child.samples, child.rate) / f0(plain.samples, plain.rate)
    assert measured == pytest.approx(expected, rel=0.08)
    assert child.duration > plain.duration  # children's tempo is slower


def test_render_speech_rejects_names_without_engine() -> None:
    with pytest.raises(ConfigError, match="engine:voice"):
        render_speech("hi", "joe")
