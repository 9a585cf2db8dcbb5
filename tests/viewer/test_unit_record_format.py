"""The unit page reads a unit's record through the run format: a record that does not
validate is listed as unreadable, naming the field, instead of being shown in part."""

from __future__ import annotations

import json
from pathlib import Path

from voxeval.viewer.unit_artifacts import load_unit

REPLY = {
    "item_id": "q1",
    "query_id": "q1",
    "system": "tiny",
    "trial": 0,
    "condition": "clean",
    "text": "Eight minutes.",
    "has_audio": False,
    "audio_s": None,
    "timing": {"wall_s": 0.2},
    "details": {},
}


def _unit(run: Path, reply: dict[str, object]) -> Path:
    relative = Path("items/q1/tiny/0")
    (run / relative).mkdir(parents=True)
    (run / relative / "reply.json").write_text(json.dumps(reply), encoding="utf-8")
    return relative


def test_a_valid_reply_is_shown_as_written(tmp_path: Path) -> None:
    unit = load_unit(tmp_path, _unit(tmp_path, REPLY))
    assert unit.reply == REPLY and unit.unreadable == {}


def test_a_reply_with_a_wrong_field_is_unreadable_naming_the_field(tmp_path: Path) -> None:
    unit = load_unit(tmp_path, _unit(tmp_path, {**REPLY, "has_audio": "maybe"}))
    assert unit.reply is None
    assert unit.unreadable["reply.json"].startswith("has_audio: Input should be a valid boolean")
