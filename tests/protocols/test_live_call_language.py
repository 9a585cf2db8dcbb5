"""A live-call run in Spanish: ``simulation.language``, its config errors, ``validate --lang``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from voxeval.audio.io import read_audio
from voxeval.cli.main import app


def spanish_suite(root: Path) -> Path:
    """One short scenario whose agent script and opening are Spanish."""
    data = scenario("reserva-1")
    data["culture_overrides"] = {"en": {"first_name": "Ann"}, "es": {"first_name": "Lucía"}}
    data["romanized_culture_overrides"] = {"es": {"first_name": "Lucia"}}
    data["starting_utterances"] = {"es": "Hola, soy <FIRST_NAME>. Quiero una cita el viernes."}
    data["agent"]["greeting"] = "Hola, clínica, ¿en qué le puedo ayudar?"
    data["agent_script"] = [
        {"say": "Claro. ¿Cuál es su número de socio y su fecha de nacimiento?"},
        {
            "say": "Gracias, <FIRST_NAME>. ¿Le reservo el viernes?",
            "tool_calls": [
                {
                    "name": "verify_member",
                    "arguments": {"member_id": "KX4", "date_of_birth": "1980-05-01"},
                }
            ],
        },
        {
            "say": "Su cita queda reservada para el viernes. Adiós.",
            "tool_calls": [{"name": "book_visit", "arguments": {"day": "friday"}}],
            "end_call": True,
        },
    ]
    return write_suite(root, [data])


def write_config(tmp_path: Path, asr: object = None, **simulation: object) -> Path:
    config = {
        "suite": str(spanish_suite(tmp_path / "suite")),
        "systems": [{"name": "scripted", "type": "scripted"}],
        "metrics": ["task_completion"],
        "seed": 1,
        "simulation": {"caller": "scripted", "mode": "audio", "language": "es", **simulation},
    }
    if asr is not None:
        config["asr"] = asr
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"caller_voice": "piper:joe"}, "simulation.caller_voice"),
        ({"caller_asr": {"provider": "whisper-tiny-en"}}, "simulation.caller_asr"),
        ({"asr": {"provider": "whisper-tiny-en"}}, "asr"),
    ],
)
def test_english_only_voice_or_asr_fails_the_spanish_run_before_any_call(
    tmp_path: Path, options: dict[str, object], field: str
) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", str(write_config(tmp_path, **options)), "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert field in result.output and "'es'" in result.output
    assert not list(out.rglob("call.json"))


def test_an_english_perturbation_voice_fails_the_spanish_run(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["perturbations"] = [{"name": "accent", "voice": "espeak:en-gb-scotland+f3"}]
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert "perturbations.0.voice" in result.output


def test_validate_lang_resolves_the_scenarios_for_that_language(tmp_path: Path) -> None:
    suite = str(spanish_suite(tmp_path / "suite"))
    for lang in ("es", "en"):
        result = CliRunner().invoke(app, ["scenarios", "validate", suite, "--lang", lang])
        assert result.exit_code == 0, result.output
        assert f"({lang}): 1/1 valid" in result.output
    missing = CliRunner().invoke(app, ["scenarios", "validate", suite, "--lang", "fr"])
    assert missing.exit_code == 2
    assert "no variant for language 'fr'" in missing.output


def test_validate_lang_es_on_the_builtin_clinic_suite() -> None:
    result = CliRunner().invoke(
        app,
        ["scenarios", "validate", "clinic-calls", "--lang", "es", "--json"],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 21 and all(r["ok"] for r in rows)


@pytest.mark.models
@pytest.mark.slow
def test_spanish_audio_call_end_to_end(tmp_path: Path) -> None:
    """Scripted system and scripted caller speaking Spanish through espeak-ng, heard by the
    multilingual Whisper base, through the real runner."""
    out = tmp_path / "run"
    config = write_config(tmp_path)
    # fixed tool arguments: this checks the language plumbing; the listening agent does not
    # get the Spanish caller's member ID across espeak-ng and Whisper base (docs/live-calls.md)
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["systems"] = [{"name": "scripted", "type": "scripted", "listen": False}]
    config.write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (unit,) = [p.parent for p in out.rglob("call.json")]
    events = [json.loads(line) for line in (unit / "events.jsonl").read_text().splitlines()]
    user_lines = [e.get("intended_text", "") for e in events if e.get("speaker") == "user"]
    assert user_lines[0] == "Hola, soy Lucía. Quiero una cita el viernes."
    # the caller heard the agent through whisper-base in Spanish: a word of the scripted line
    heard = " ".join(e.get("transcript", "") for e in events if e.get("speaker") == "assistant")
    assert "viernes" in heard.lower(), heard
    from voxeval.providers.asr.asr_whisper import WhisperBase

    spoken = WhisperBase().identify_language(read_audio(unit / "user.wav"))
    assert spoken.language == "es", spoken.top()
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["systems"]["scripted"]["task_completion"]["mean"] == 1.0
