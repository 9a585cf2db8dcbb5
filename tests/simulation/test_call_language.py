"""Live calls in a language besides English: settings, voices, ASR, callers and agent prompts."""

from __future__ import annotations

import pytest

from tests.simulation.helpers import scenario
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.errors import ConfigError
from voxeval.providers.base import Voice
from voxeval.providers.voices.voice_catalogue import SpeakerProfile, rank_voices, voice_language
from voxeval.simulation.callers.llm_caller import caller_prompt
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.personas import get_persona
from voxeval.simulation.simulation_config import parse_simulation
from voxeval.systems.call_prompts import agent_system_prompt


def spanish_scenario() -> Scenario:
    data = scenario("reserva-1")
    data["culture_overrides"] = {"en": {"first_name": "Ann"}, "es": {"first_name": "Lucía"}}
    data["starting_utterances"] = {"es": "Hola, soy <FIRST_NAME> y quisiera una cita el viernes."}
    return Scenario.model_validate(data).in_language("es")


def test_spanish_run_defaults_to_spanish_voices_and_multilingual_asr() -> None:
    sim = parse_simulation({"language": "es"})
    assert sim.caller_voice == sim.agent_voice == "espeak:es+m3"
    assert sim.caller_asr.provider == "whisper-base"
    english = parse_simulation({})
    assert (english.caller_voice, english.caller_asr.provider) == ("piper:joe", "whisper-tiny-en")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"caller_voice": "piper:joe"}, "simulation.caller_voice"),
        ({"agent_voice": "espeak:en-gb+f3"}, "simulation.agent_voice"),
        ({"caller_voice": "female,adult,en"}, "simulation.caller_voice"),
        ({"caller_asr": {"provider": "whisper-tiny-en"}}, "simulation.caller_asr"),
    ],
)
def test_english_only_voice_or_asr_in_a_spanish_run_names_the_field(
    options: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigError, match=rf"{field}: .*'es'"):
        parse_simulation({"language": "es", **options})


def test_a_language_without_a_builtin_voice_asks_for_one_and_text_mode_needs_none() -> None:
    with pytest.raises(
        ConfigError, match=r"simulation.caller_voice: no built-in voice speaks 'fr'"
    ):
        parse_simulation({"language": "fr"})
    assert parse_simulation({"language": "fr", "mode": "text"}).language == "fr"
    # a voice of an engine voxeval cannot look into is trusted
    parse_simulation({"language": "fr", "caller_voice": "openai:alloy", "agent_voice": "x:y"})


def test_voice_language_comes_from_the_catalogue_or_the_profile() -> None:
    assert voice_language("piper:joe") == "en"
    assert voice_language("espeak:es-419+f2") == "es"
    assert voice_language("espeak:es") == "es"
    assert voice_language("female,adult,es") == "es"
    assert voice_language("female,adult,scottish") is None  # follows the run's language
    assert voice_language("openai:alloy") is None


def test_profile_ranks_only_voices_of_its_language() -> None:
    def voice(name: str, language: str) -> Voice:
        return Voice(name, "espeak", "female", "adult", "us", language=language)

    catalogue = [voice("espeak:en-us+f3", "en"), voice("espeak:es+f3", "es")]
    spanish = SpeakerProfile.parse("female,adult,es")
    assert [c.voice.name for c in rank_voices(spanish, catalogue)] == ["espeak:es+f3"]
    english = SpeakerProfile.parse("female,adult")
    assert [c.voice.name for c in rank_voices(english, catalogue)] == ["espeak:en-us+f3"]


def test_agent_prompt_gets_a_language_addendum_only_for_other_languages() -> None:
    spanish = agent_system_prompt(spanish_scenario(), hears_text=True)
    assert "The caller speaks Spanish" in spanish
    english = agent_system_prompt(Scenario.model_validate(scenario()), hears_text=True)
    assert "The caller speaks" not in english


def test_llm_caller_is_told_to_speak_only_the_language() -> None:
    prompt = caller_prompt(spanish_scenario(), get_persona(None))
    assert "Speak only Spanish" in prompt
    assert "Speak only" not in caller_prompt(Scenario.model_validate(scenario()), get_persona(None))


def test_scripted_caller_speaks_spanish_and_hears_spanish_cues() -> None:
    caller = ScriptedCaller()
    opening = caller.start(spanish_scenario())
    assert opening.text == "Hola, soy Lucía y quisiera una cita el viernes."
    answer = caller.respond(None, "¿Cuál es su número de socio y su fecha de nacimiento?")
    assert answer.text == "Claro: KX4, y 1980-05-01." and not answer.end_call
    assert caller.respond(None, "¿Le reservo el viernes, le parece bien?").text == (
        "Sí, adelante, por favor."
    )
    last = caller.respond(None, "Su cita está reservada. ¿Algo más?")
    assert last.end_call and last.text == "No, eso es todo. Muchas gracias, adiós."


def test_scripted_caller_refuses_a_language_it_has_no_lines_for() -> None:
    data = scenario()
    data["language"] = "fr"
    with pytest.raises(ConfigError, match=r"simulation.caller: .*'scripted'.*'fr'"):
        ScriptedCaller().start(Scenario.model_validate(data))


def test_clinic_suite_plays_in_spanish_with_spanish_names() -> None:
    path = resolve_suite("clinic-calls").path
    english = load_scenario_suite(path)
    spanish = load_scenario_suite(path, language="es")
    assert spanish.language == "es" and len(spanish.scenarios) == len(english.scenarios) == 21
    s01 = spanish.get("clinic-s01-reschedule-free")
    assert s01.user_goal.information_required["last name"] == "Cortés"
    assert s01.expected_session["last_name"] == "Cortés"
    assert s01.user_goal.starting_utterance.startswith("Hola")
    assert "Verónica" in s01.agent_script[1].say
    assert (
        english.get("clinic-s01-reschedule-free").user_goal.information_required["last name"]
        == "Lindqvist"
    )
    for item in spanish.scenarios:  # every clinic scenario has a Spanish variant
        assert "<" not in item.model_dump_json(exclude={"culture_overrides"})
        assert item.language == "es" and item.starting_utterances.get("es")


def test_stt_wer_of_a_spanish_call_keeps_accents() -> None:
    """English normalisation strips diacritics ("sí" == "si"); a Spanish call is normalised
    with the basic normaliser, which keeps them, so a lost accent counts as an error."""
    from voxeval.scoring.calls.call_diagnostics import stt_wer
    from voxeval.scoring.calls.live_call_record import LiveCallRecord
    from voxeval.simulation.timeline import SpeakerSegment, Timeline

    said = SpeakerSegment(
        "user", 0, 1, 0, intended_text="Sí, soy Lucía.", transcript="si soy lucia"
    )
    reply = SpeakerSegment("assistant", 1.5, 2.0, 0, intended_text="Vale.")
    timeline = Timeline(segments=[said, reply])
    spanish = stt_wer(LiveCallRecord(timeline=timeline, scenario=spanish_scenario()))
    assert spanish.details["errors"] == 2 and spanish.details["ref_words"] == 3
    english = stt_wer(
        LiveCallRecord(timeline=timeline, scenario=Scenario.model_validate(scenario()))
    )
    assert english.value == 0.0


def test_voices_cli_names_a_language_no_local_voice_speaks() -> None:
    from typer.testing import CliRunner

    from voxeval.cli.main import app

    result = CliRunner().invoke(app, ["voices", "--profile", "female,adult,fr"])
    assert result.exit_code == 2
    assert "no local TTS voice speaks 'fr'" in result.output
