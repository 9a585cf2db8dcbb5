"""Legacy system spellings (issue 41, point 4): ``openai_audio`` is no longer a registered
name, and it and ``type: agent`` work for one version with a note naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.runner.test_plan_check import live_call_config, write
from voxeval.cli.main import app
from voxeval.config import SystemSpec
from voxeval.errors import UnknownComponent
from voxeval.registry import lookup, names
from voxeval.systems.factory import deprecation_note, resolve_spec, system_class
from voxeval.systems.openai_audio import OpenAIAudioSystem


def test_openai_audio_is_registered_once() -> None:
    assert "openai-audio" in names("system")
    assert "openai_audio" not in names("system")
    with pytest.raises(UnknownComponent):
        lookup("system", "openai_audio")


def test_the_old_name_resolves_with_a_note() -> None:
    spec = SystemSpec(name="gpt", type="openai_audio", audio_llm={"provider": "openai"})
    assert resolve_spec(spec).type == "openai-audio"
    assert resolve_spec(spec).options() == spec.options()
    assert system_class(spec) is OpenAIAudioSystem
    note = deprecation_note(spec)
    assert note is not None and "write 'type: openai-audio'" in note and "0.1 only" in note
    assert deprecation_note(SystemSpec(name="gpt", type="openai-audio")) is None


def test_validate_names_the_file_and_field_of_each_legacy_spelling(tmp_path: Path) -> None:
    config = live_call_config(tmp_path)
    config["systems"] = [
        {"name": "new", "type": "scripted"},
        {"name": "old", "type": "agent", "agent": "scripted"},
    ]
    path = write(tmp_path, config)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "note:" in line]
    assert len(notes) == 1
    assert notes[0].startswith(f"{path}: note: systems.1 (old).type: ")
    assert "write 'type: scripted' and drop 'agent'" in notes[0]
    assert yaml.safe_load(path.read_text())["systems"][1]["type"] == "agent"  # not rewritten
