"""The system spellings voxeval 0.1 accepted (issue 41, point 4) are refused: ``type: agent``
with ``agent: NAME`` and the type ``openai_audio``. The refusal comes before anything is built
or called, names the file, the system and the field, and says exactly what to write instead;
the config is never rewritten."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.test_plan_check import (
    assert_refused_before_any_call,
    live_call_config,
    single_turn_config,
    write,
)
from voxeval.cli.main import app
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.registry import lookup, names
from voxeval.systems import ScriptedSystem, build_system, removed_spelling, system_class


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(lambda path, body: FakeResponse(status=500)) as fake:
        yield fake


def one_line(output: str) -> str:
    return " ".join(output.split())  # the console wraps long lines


def test_openai_audio_is_registered_once() -> None:
    assert "openai-audio" in names("system")
    assert "openai_audio" not in names("system")
    with pytest.raises(UnknownComponent):
        lookup("system", "openai_audio")


@pytest.mark.parametrize(
    ("spec", "instead"),
    [
        (
            SystemSpec(name="gpt", type="openai_audio", audio_llm={"provider": "openai"}),
            "'type: openai_audio' is no longer accepted; write 'type: openai-audio'",
        ),
        (
            SystemSpec(name="slip", type="agent", agent="scripted", script="wrong"),
            "'type: agent, agent: scripted' is no longer accepted; write 'type: scripted' and "
            "drop 'agent'",
        ),
        (
            SystemSpec(name="x", type="agent"),
            "'type: agent' is no longer accepted; write the system's type in 'type' (one of ",
        ),
    ],
)
def test_building_a_removed_spelling_is_refused_with_what_to_write(
    spec: SystemSpec, instead: str
) -> None:
    note = removed_spelling(spec)
    assert note is not None and note.startswith(f"system {spec.name!r}: {instead}")
    assert "docs/systems.md, 'Moving from 0.1'" in note
    for build in (system_class, build_system):
        with pytest.raises(ConfigError) as refused:
            build(spec)
        assert str(refused.value) == note


def test_current_spellings_pass() -> None:
    assert removed_spelling(SystemSpec(name="gpt", type="openai-audio")) is None
    spec = SystemSpec(name="slip", type="scripted", script="wrong")
    assert removed_spelling(spec) is None
    built = build_system(spec)
    assert isinstance(built, ScriptedSystem) and built.options.script == "wrong"


def test_validate_names_the_file_system_and_field_of_each_removed_spelling(
    tmp_path: Path,
) -> None:
    config = live_call_config(tmp_path)
    config["systems"] = [
        {"name": "new", "type": "scripted"},
        {"name": "old", "type": "agent", "agent": "scripted"},
    ]
    path = write(tmp_path, config)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    output = one_line(result.output)
    assert f"{path}: systems.1 (old).type: system 'old': 'type: agent, agent: scripted'" in output
    assert "write 'type: scripted' and drop 'agent'" in output
    assert "systems.0 (new)" not in output
    assert yaml.safe_load(path.read_text())["systems"][1]["type"] == "agent"  # not rewritten


def test_run_refuses_a_removed_spelling_before_any_call(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    config = single_turn_config(tmp_path, server.url)
    config["systems"][0] = {
        "name": "gpt",
        "type": "openai_audio",
        "audio_llm": {"provider": "openai", "base_url": server.url},
    }
    output = one_line(assert_refused_before_any_call(write(tmp_path, config), server, tmp_path))
    assert "systems.0 (gpt).type" in output
    assert "write 'type: openai-audio'" in output
