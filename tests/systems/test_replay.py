from __future__ import annotations

import json

import pytest

from tests.systems.helpers import chirp
from voxeval.audio import write_audio
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.registry import lookup
from voxeval.systems import MissingReply, ReplaySystem, Turn


def make(**options) -> ReplaySystem:
    spec = SystemSpec(name="rec", type="replay", **options)
    system: ReplaySystem = lookup("system", "replay").from_spec(spec, None)
    return system


def ask(system: ReplaySystem, item_id: str):
    return system.reply([Turn(role="user", audio=chirp(), item_id=item_id)])


def test_folder_of_wavs_with_optional_text(tmp_path) -> None:
    write_audio(chirp(1.0), tmp_path / "q1.wav")
    (tmp_path / "q1.txt").write_text("Paris.\n")
    write_audio(chirp(0.5), tmp_path / "q2.wav")
    system = make(folder=str(tmp_path))
    first = ask(system, "q1")
    assert first.audio is not None and first.audio.duration == pytest.approx(1.0)
    assert first.text == "Paris."
    assert ask(system, "q2").text is None
    with pytest.raises(MissingReply, match=r"has no reply for item 'q3'") as err:
        ask(system, "q3")
    assert str(tmp_path) in str(err.value)


def test_manifest_paths_are_relative_to_it(tmp_path) -> None:
    write_audio(chirp(0.25), tmp_path / "audio" / "a.wav")
    manifest = tmp_path / "replies.jsonl"
    manifest.write_text(json.dumps({"item_id": "q1", "audio": "audio/a.wav", "text": "hi"}) + "\n")
    system = make(manifest=str(manifest))
    reply = ask(system, "q1")
    assert reply.text == "hi" and reply.audio is not None
    with pytest.raises(MissingReply, match="no row for item 'q2'"):
        ask(system, "q2")


def test_bad_options_name_the_system(tmp_path) -> None:
    with pytest.raises(ConfigError, match="system 'rec'"):
        make()
    with pytest.raises(ConfigError, match="does not exist"):
        make(folder=str(tmp_path / "missing"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "q1"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1"):
        make(manifest=str(bad))
