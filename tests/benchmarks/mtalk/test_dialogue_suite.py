"""Dialogue-suite files: inline or JSONL dialogues, relative audio, errors naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.benchmarks.mtalk_fixtures import write_wav
from voxeval.benchmarks.mtalk.dialogue import Dialogue
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite, write_dialogue_suite
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.errors import ConfigError


def _row(ident: str, audio: str | None = None) -> dict:
    turn: dict = {"transcript": "[phone ringing] Can you hold on a second?"}
    if audio is not None:
        turn["audio"] = audio
    return {
        "id": ident,
        "dimension": "ambient",
        "scenario": "casual",
        "capability": {"tier1": "ambient-sound-perception", "tier2": "ambient-sound-understanding"},
        "turns": [turn, {"transcript": "Sorry, where were we?"}],
    }


def test_inline_suite_resolves_audio_next_to_the_file(tmp_path: Path) -> None:
    write_wav(tmp_path / "suite" / "audio" / "a1.wav")
    header = {
        "name": "tiny",
        "protocol": "multi_turn",
        "dialogues": [_row("amb-casual-01", "audio/a1.wav"), _row("amb-casual-02")],
    }
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(header))
    suite = load_dialogue_suite(tmp_path / "suite")
    assert suite.name == "tiny"
    first, second = suite.dialogues
    assert first.turns[0].audio == str((tmp_path / "suite/audio/a1.wav").resolve())
    assert first.turns[0].tags == ["[phone ringing]"]
    assert second.turns[0].audio is None  # not rendered yet
    assert resolve_suite(str(tmp_path / "suite")).protocol == "multi_turn"


def test_errors_name_file_dialogue_and_field(tmp_path: Path) -> None:
    rows = [_row("amb-1", "audio/missing.wav"), _row("amb-1"), {**_row("amb-3"), "scenario": "x"}]
    (tmp_path / "dialogues.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    header = {"name": "bad", "protocol": "multi_turn", "dialogues": "dialogues.jsonl"}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(header))
    with pytest.raises(ConfigError) as info:
        load_dialogue_suite(tmp_path / "suite.yaml")
    lines = str(info.value).splitlines()
    where = str((tmp_path / "dialogues.jsonl").resolve())
    assert lines[0].startswith(
        f"{where}: dialogue #1 (id='amb-1'): turns.1.audio: file not found: "
    )
    assert lines[1] == f"{where}: dialogue #2 (id='amb-1'): id: duplicate of dialogue #1"
    assert lines[2].startswith(f"{where}: dialogue #3 (id='amb-3'): scenario: ")
    assert "unknown scenario 'x'" in lines[2]


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    audio = write_wav(tmp_path / "elsewhere" / "t1.wav")
    dialogue = Dialogue.model_validate(_row("amb-casual-01", str(audio)))
    suite_file = write_dialogue_suite([dialogue], tmp_path / "out", "round-trip")
    stored = json.loads((tmp_path / "out" / "dialogues.jsonl").read_text())
    assert stored["turns"][0]["audio"] == "../elsewhere/t1.wav"
    suite = load_dialogue_suite(suite_file)
    assert suite.dialogues[0].turns[0].audio == str(audio.resolve())
    assert suite.dialogues[0].model_dump(exclude={"turns"}) == dialogue.model_dump(
        exclude={"turns"}
    )
