"""Natural voices by default: every profile gets a neural voice, no profile dimension is
confounded with the engine, profiles without a natural voice of their own say so, and the
formant synthesizers are the ``synthetic_voice`` condition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from voxeval.benchmarks.build import build_suite, profile_voice_notes, profile_voices
from voxeval.benchmarks.build_options import BuildOptions
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability
from voxeval.providers.voices.engine_confounds import engine_confounds
from voxeval.providers.voices.voice_catalogue import VoiceChoice

pytestmark = pytest.mark.models
if not all(
    availability("tts", ProviderSpec(provider=e)).available for e in ("kokoro", "piper", "espeak")
):
    pytest.skip("needs Kokoro, Piper and espeak-ng", allow_module_level=True)


def _rows(options: BuildOptions) -> list[tuple[str, VoiceChoice]]:
    return list(profile_voices(options))


@pytest.mark.parametrize("profiles", [4, "all"])
def test_default_voices_are_natural_and_unconfounded(profiles: int | str) -> None:
    options = BuildOptions(profiles=profiles)  # type: ignore[arg-type]
    assert options.engines == ["piper", "kokoro"]
    rows = _rows(options)
    assert all(choice.voice.details["natural"] for _, choice in rows)
    dimensions = ("gender", "age", "timbre")
    fields = [dict(zip(dimensions, label.split("-"), strict=True)) for label, _ in rows]
    engines = [choice.voice.engine for _, choice in rows]
    assert engine_confounds(list(zip(fields, engines, strict=True))) == {}
    assert set(engines) == {"piper", "kokoro"}


def test_cli_profiles_says_which_profiles_have_no_natural_voice() -> None:
    from voxeval.cli.main import app

    result = CliRunner().invoke(app, ["profiles", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["confounded"] == {}
    by_profile = {r["profile"]: r for r in data["profiles"]}
    assert by_profile["female-adult-bright"]["natural"] == "native"
    assert by_profile["female-adult-bright"]["note"] is None
    senior = by_profile["male-senior-dark"]
    assert senior["natural"] == "transformed"
    assert "no natural senior male voice" in senior["note"]
    table = CliRunner().invoke(app, ["profiles"])
    assert "note: no natural senior female voice" in " ".join(table.output.split())


def test_formant_voices_only_when_named() -> None:
    rows = _rows(BuildOptions(profiles=4, engines=["espeak"]))
    assert {choice.voice.engine for _, choice in rows} == {"espeak"}


def test_synthetic_voice_condition_speaks_the_profile_with_a_formant_synthesizer(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite.yaml"
    query = {"id": "q", "text": "What time is it?", "category": "II", "checklist": ["A time."]}
    suite.write_text(yaml.safe_dump({"name": "t", "protocol": "single_turn", "queries": [query]}))
    options = {
        "profiles": ["male-adult-dark"],
        "engines": ["piper"],
        "conditions": ["clean", "synthetic_voice", "natural_noise"],
    }
    built = build_suite(suite, tmp_path / "out", options, progress=False)
    entries = {i.condition: i.entry for i in built.items}
    assert entries["clean"]["voice"] == "piper:joe"
    assert entries["clean"]["naturalness"] == "native"
    assert entries["natural_noise"]["voice"] == "piper:joe"  # noise over the natural voice
    synthetic = entries["synthetic_voice"]
    assert synthetic["engine"] in ("espeak", "flite")
    assert synthetic["naturalness"] == "synthetic" and "formant" in synthetic["naturalness_note"]
    assert "noise" not in synthetic  # clean audio, only the voice differs
    assert synthetic["params_hash"] != entries["clean"]["params_hash"]
    # the report's voice notes describe the natural voices, not the robustness condition
    notes = profile_voice_notes([i.entry for i in built.items])
    assert notes == {
        "male-adult-dark": {
            "voice": "piper:joe",
            "engine": "piper",
            "naturalness": "native",
            "note": None,
        }
    }
    again = build_suite(suite, tmp_path / "out", options, progress=False)
    assert again.rendered == 0 and again.cached == 3


def test_a_senior_profile_is_spoken_slower_by_the_engine_not_stretched(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    query = {"id": "q", "text": "Where is my parcel today?", "category": "II", "checklist": ["x"]}
    suite.write_text(yaml.safe_dump({"name": "t", "protocol": "single_turn", "queries": [query]}))
    options = {"engines": ["piper"], "conditions": ["clean"], "rate": 22050}
    adult = build_suite(
        suite, tmp_path / "a", {**options, "profiles": ["male-adult-dark"]}, progress=False
    )
    senior = build_suite(
        suite, tmp_path / "s", {**options, "profiles": ["male-senior-dark"]}, progress=False
    )
    entry = senior.items[0].entry
    assert entry["voice"] == "piper:joe" and entry["naturalness"] == "transformed"
    assert entry["native_tempo"] is True and entry["transform"]["tempo"] == 0.85
    # Piper at length scale 1.084 / 0.85, then resampled 1.4 semitones up (1.084 x faster).
    # The length scale stretches phonemes but not the fixed silences, so the utterance slows
    # by less than 1 / 0.85 (measured: 1.04 for this short question).
    ratio = entry["speech_duration_s"] / adult.items[0].entry["speech_duration_s"]
    assert 1.02 < ratio < 1 / 0.85 + 0.02
