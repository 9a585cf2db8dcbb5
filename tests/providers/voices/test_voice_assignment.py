"""Balanced voice assignment: no profile dimension confounded with the engine."""

from __future__ import annotations

from voxeval.providers.base import Voice
from voxeval.providers.voices.engine_confounds import engine_confounds
from voxeval.providers.voices.voice_assignment import assign_voices
from voxeval.providers.voices.voice_catalogue import SpeakerProfile


def _voice(engine: str, name: str, gender: str, age: str) -> Voice:
    return Voice(f"{engine}:{name}", engine, gender, age, "us", "dark", quality=3.0)


# Engine "old" has only native senior voices, engine "new" only adult ones: the closest-voice
# choice puts every senior on "old" and every adult on "new".
CATALOGUE = [
    _voice("new", "m", "male", "adult"),
    _voice("new", "f", "female", "adult"),
    _voice("old", "grandpa", "male", "senior"),
    _voice("old", "grandma", "female", "senior"),
    _voice("mono", "joe", "male", "adult"),  # one male voice only
]
PROFILES = [
    SpeakerProfile("male", "adult", timbre="dark"),
    SpeakerProfile("female", "adult", timbre="dark"),
    SpeakerProfile("male", "senior", timbre="dark"),
    SpeakerProfile("female", "senior", timbre="dark"),
]


def _rows(choices: list) -> list:
    return [
        ({"gender": p.gender, "age": p.age}, c.voice.engine)
        for p, c in zip(PROFILES, choices, strict=True)
    ]


def test_closest_choice_confounds_age_with_engine() -> None:
    closest = assign_voices(PROFILES, CATALOGUE[:4], balanced=False)
    assert [c.voice.name for c in closest] == [
        "new:m",
        "new:f",
        "old:grandpa",
        "old:grandma",
    ]
    assert set(engine_confounds(_rows(closest))) == {"age"}


def test_balanced_choice_puts_both_ages_on_each_engine_with_labelled_transforms() -> None:
    balanced = assign_voices(PROFILES, CATALOGUE[:4])
    assert engine_confounds(_rows(balanced)) == {}
    by_engine: dict[str, set[str]] = {}
    for profile, choice in zip(PROFILES, balanced, strict=True):
        by_engine.setdefault(choice.voice.engine, set()).add(profile.age)
        native = choice.voice.age == profile.age and choice.voice.gender == profile.gender
        # a profile the engine has no native voice for is a transform, and says so
        assert choice.transform.is_identity == native
    assert set(by_engine) == {"new", "old"}  # both engines still used
    assert {"adult", "senior"} in by_engine.values()  # ages compared within one engine
    assert assign_voices(PROFILES, CATALOGUE[:4]) == balanced  # deterministic


def test_an_engine_without_the_gender_is_not_used_for_it() -> None:
    balanced = assign_voices(PROFILES, CATALOGUE)
    assert engine_confounds(_rows(balanced)) == {}
    for profile, choice in zip(PROFILES, balanced, strict=True):
        if profile.gender == "female":
            assert choice.voice.engine != "mono"
    assert len({c.voice.engine for c in balanced}) == 3  # as many engines as possible


def test_large_sets_are_balanced_by_hill_climbing() -> None:
    profiles = [
        SpeakerProfile(g, a, timbre=t)
        for g in ("male", "female")
        for a in ("child", "adolescent", "adult", "senior")
        for t in ("bright", "dark")
    ]
    choices = assign_voices(profiles, CATALOGUE)  # 3^8 * 2^8 assignments: not exhaustive
    rows = [
        ({"gender": p.gender, "age": p.age, "timbre": p.timbre}, c.voice.engine)
        for p, c in zip(profiles, choices, strict=True)
    ]
    assert engine_confounds(rows) == {}


def test_within_one_engine_the_measured_f0_follows_the_labelled_transform() -> None:
    import numpy as np
    import pytest

    from voxeval.config import ProviderSpec
    from voxeval.providers.factory import availability
    from voxeval.providers.voices.voice_catalogue import render_speech, voice_catalogue

    librosa = pytest.importorskip("librosa")
    if not availability("tts", ProviderSpec(provider="flite")).available:
        pytest.skip("flite missing")

    def f0(audio) -> float:  # type: ignore[no-untyped-def]
        track, voiced, _ = librosa.pyin(audio.samples, fmin=60, fmax=500, sr=audio.rate)
        return float(np.nanmedian(track[voiced]))

    text = "Could you tell me how to get to the station, please?"
    ages = [SpeakerProfile("female", a) for a in ("senior", "adult", "child")]
    senior, adult, child = assign_voices(ages, voice_catalogue(("flite",)))
    assert {c.voice.name for c in (senior, adult, child)} == {"flite:slt"}
    assert senior.transform.pitch_semitones < 0 < child.transform.pitch_semitones
    measured = [f0(render_speech(text, c)) for c in (senior, adult, child)]
    assert measured[0] < measured[1] < measured[2]  # lower / native / higher, as labelled
    assert measured[2] / measured[1] == pytest.approx(
        2 ** (child.transform.pitch_semitones / 12), rel=0.08
    )
