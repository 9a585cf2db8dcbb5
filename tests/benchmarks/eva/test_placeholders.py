"""Placeholder resolution per language and scenarios played in another language."""

from __future__ import annotations

import pytest

from voxeval.benchmarks.eva.placeholders import (
    fill_placeholders,
    has_placeholders,
    placeholder_values,
)
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.errors import ConfigError

CULTURE = {
    "en": {"first_name": "Mary", "last_name": "Stone", "phone": "555-0101"},
    "es": {
        "first_name": "Lucía",
        "last_name": "Núñez",
        "phone": "+34 600 111 222",
        "companion": {"first_name": "Íñigo"},
    },
}
ROMANIZED = {
    "es": {"first_name": "Lucia", "last_name": "Nunez", "companion": {"first_name": "Inigo"}}
}


def test_values_cover_plain_romanized_and_nested_tokens() -> None:
    values = placeholder_values(CULTURE, ROMANIZED, "es")
    assert values["FIRST_NAME"] == "Lucía"
    assert values["LAST_NAME_ROMANIZED"] == "nunez"
    assert values["COMPANION_FIRST_NAME"] == "Íñigo"
    assert values["COMPANION_FIRST_NAME_ROMANIZED"] == "inigo"
    assert values["PHONE"] == "+34 600 111 222"
    # a language without a romanized entry falls back to its own names, lower-cased
    assert placeholder_values(CULTURE, ROMANIZED, "en")["LAST_NAME_ROMANIZED"] == "stone"


def test_fill_replaces_inside_nested_values_and_keys() -> None:
    values = placeholder_values(CULTURE, ROMANIZED, "es")
    db = {
        "users": {
            "<LAST_NAME_ROMANIZED>-1": {
                "email": "<FIRST_NAME_ROMANIZED>@x.org",
                "names": ["<FIRST_NAME> <LAST_NAME>"],
            }
        }
    }
    assert fill_placeholders(db, values) == {
        "users": {"nunez-1": {"email": "lucia@x.org", "names": ["Lucía Núñez"]}}
    }
    assert has_placeholders(db) and not has_placeholders(fill_placeholders(db, values))


def test_unknown_token_and_missing_language_name_the_field() -> None:
    values = placeholder_values(CULTURE, ROMANIZED, "en")
    with pytest.raises(ConfigError, match=r"users\.u1\.name: placeholder <MIDDLE_NAME>"):
        fill_placeholders({"users": {"u1": {"name": "<MIDDLE_NAME>"}}}, values)
    with pytest.raises(ConfigError, match=r"no entry for language 'fr'.*en, es"):
        placeholder_values(CULTURE, ROMANIZED, "fr")


def _scenario(**extra: object) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "s1",
            "current_date_time": "2026-03-16 08:00",
            "user_goal": {
                "high_level_user_goal": "Update the address of <FIRST_NAME> <LAST_NAME>.",
                "information_required": {"last name": "<LAST_NAME>"},
                "starting_utterance": "Hi, this is <FIRST_NAME>.",
            },
            "user_persona": "A calm caller.",
            "initial_db": {"users": {"u1": {"last_name": "<LAST_NAME>", "phone": "<PHONE>"}}},
            "expected_db": {"users": {"u1": {"last_name": "<LAST_NAME>", "phone": "<PHONE>"}}},
            "agent": {"role": "agent", "instructions": "help"},
            **extra,
        }
    )


def test_scenario_in_language_resolves_every_field_and_the_opening_line() -> None:
    scenario = _scenario(
        culture_overrides=CULTURE,
        romanized_culture_overrides=ROMANIZED,
        starting_utterances={"es": "Hola, soy <FIRST_NAME>."},
    )
    assert scenario.languages() == ["en", "es"]
    es = scenario.in_language("es")
    assert es.language == "es"
    assert es.user_goal.starting_utterance == "Hola, soy Lucía."
    assert es.user_goal.information_required == {"last name": "Núñez"}
    assert es.initial_db["users"]["u1"] == {"last_name": "Núñez", "phone": "+34 600 111 222"}
    assert es.expected_db["users"]["u1"]["last_name"] == "Núñez"
    en = scenario.in_language("en")
    assert en.user_goal.starting_utterance == "Hi, this is Mary."
    assert en.user_goal.high_level_user_goal == "Update the address of Mary Stone."


def test_scenario_without_a_variant_or_overrides_is_refused() -> None:
    with pytest.raises(ConfigError, match="no variant for language 'de'"):
        _scenario(culture_overrides=CULTURE).in_language("de")
    with pytest.raises(ConfigError, match="tokens but no culture_overrides"):
        _scenario().in_language("en")
