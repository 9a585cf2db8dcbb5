"""Personas: rates checked on construction, backchannel phrases per language."""

from __future__ import annotations

import pytest

from voxeval.errors import ConfigError
from voxeval.simulation.personas import (
    PERSONAS,
    Persona,
    backchannel_phrases,
    get_persona,
)


def test_personas_order_their_rates_as_their_descriptions_say() -> None:
    default, aggressive = PERSONAS["default"], PERSONAS["aggressive_impatient"]
    elderly, forgetful = PERSONAS["elderly_slow"], PERSONAS["forgetful_disorganized"]
    assert aggressive.barge_in_rate > forgetful.barge_in_rate > default.barge_in_rate
    assert elderly.barge_in_rate == 0.0
    assert aggressive.barge_in_min_s < default.barge_in_min_s
    assert elderly.pause_median_s > forgetful.pause_median_s > default.pause_median_s
    assert aggressive.pause_rate < default.pause_rate < forgetful.pause_rate < elderly.pause_rate
    assert forgetful.number_pause_rate > elderly.number_pause_rate > default.number_pause_rate
    assert elderly.backchannel_rate > default.backchannel_rate > aggressive.backchannel_rate
    assert get_persona(None) is default and get_persona("elderly_slow") is elderly


def test_a_rate_out_of_range_names_the_persona_and_field() -> None:
    with pytest.raises(ConfigError, match=r"persona 'x': barge_in_rate must be in \[0, 1\]"):
        Persona("x", "p", barge_in_rate=1.5)
    with pytest.raises(ConfigError, match="pause_median_s must be positive"):
        Persona("x", "p", pause_median_s=0.0)
    with pytest.raises(ConfigError, match="barge_in_beta"):
        Persona("x", "p", barge_in_beta=(0.0, 1.0))
    with pytest.raises(ConfigError, match="unknown caller persona 'shy'"):
        get_persona("shy")


def test_backchannel_phrases_by_base_language() -> None:
    assert backchannel_phrases("en-GB")[0] == "mhm" and "right" in backchannel_phrases("en")
    assert set(backchannel_phrases("es_MX")) >= {"ajá", "claro", "vale"}
    assert backchannel_phrases("de") == ("mhm",)
