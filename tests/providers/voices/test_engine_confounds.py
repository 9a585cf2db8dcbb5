"""Confound detection between speaker-profile dimensions and the TTS engine."""

from __future__ import annotations

from voxeval.providers.voices.engine_confounds import count_separated, engine_confounds


def _row(gender: str, age: str, timbre: str, engine: str) -> tuple[dict[str, str], str]:
    return {"gender": gender, "age": age, "timbre": timbre}, engine


# The old default grid: seniors on espeak, adults on flite.
OLD_DEFAULT = [
    _row("male", "adult", "bright", "flite"),
    _row("female", "adult", "bright", "flite"),
    _row("male", "senior", "dark", "espeak"),
    _row("female", "senior", "dark", "espeak"),
]


def test_every_senior_on_espeak_confounds_age_and_timbre_not_gender() -> None:
    confounds = engine_confounds(OLD_DEFAULT)
    assert set(confounds) == {"age", "timbre"}
    assert confounds["age"]["engines"] == {"adult": ["flite"], "senior": ["espeak"]}
    assert confounds["age"]["separated"] == [["adult", "senior"]]
    assert "adult on flite" in confounds["age"]["note"]
    assert "senior on espeak" in confounds["age"]["note"]
    assert count_separated(OLD_DEFAULT) == 2


def test_ages_sharing_an_engine_are_not_confounded() -> None:
    balanced = [
        _row("male", "adult", "bright", "espeak"),
        _row("female", "adult", "bright", "flite"),
        _row("male", "senior", "dark", "flite"),
        _row("female", "senior", "dark", "espeak"),
    ]
    assert engine_confounds(balanced) == {}
    assert count_separated(balanced) == 0


def test_one_engine_or_one_value_is_never_a_confound() -> None:
    one_engine = [_row("male", a, "dark", "flite") for a in ("child", "adult", "senior")]
    assert engine_confounds(one_engine) == {}
    one_age = [_row("male", "adult", "dark", e) for e in ("piper", "flite")]
    assert engine_confounds(one_age) == {}


def test_only_the_separated_values_are_named_and_unset_fields_ignored() -> None:
    rows = [
        _row("male", "adult", "dark", "piper"),
        _row("male", "adult", "dark", "flite"),
        _row("male", "child", "dark", "flite"),
        _row("male", "senior", "dark", "espeak"),
        ({"gender": "female"}, "espeak"),  # no age: says nothing about ages
    ]
    confounds = engine_confounds(rows)
    # female shares espeak with male: gender is not confounded
    assert set(confounds) == {"age"}
    assert confounds["age"]["separated"] == [["adult", "senior"], ["child", "senior"]]
    assert "adult on flite/piper; child on flite; senior on espeak" in confounds["age"]["note"]
