"""Study folders round-trip, and their mistakes are named by file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxeval.errors import ConfigError
from voxeval.raters.study.study_files import (
    StudyConfig,
    StudyItem,
    load_study_config,
    load_study_items,
    write_study,
)


def _item(item_id: str = "d1") -> StudyItem:
    return StudyItem.model_validate(
        {
            "item_id": item_id,
            "title": "Keeps track of the caller's earlier constraint",
            "stimuli": [
                {
                    "id": "u1",
                    "role": "user",
                    "turn": 1,
                    "path": "audio/d1/u1.wav",
                    "duration_s": 1.5,
                },
                {"id": "a1", "role": "a", "turn": 1, "path": "audio/d1/a1.wav", "duration_s": 2.0},
            ],
            "systems": {"a": "alpha", "b": "beta"},
        }
    )


def _study(tmp_path: Path) -> Path:
    (tmp_path / "audio" / "d1").mkdir(parents=True)
    for name in ("u1", "a1"):
        (tmp_path / "audio" / "d1" / f"{name}.wav").write_bytes(b"RIFF")
    config = StudyConfig(study_id="s1", task="arena", title="Arena pilot")
    return write_study(tmp_path, config, [_item()])


def test_round_trip(tmp_path: Path) -> None:
    path = _study(tmp_path)
    config = load_study_config(path)
    items = load_study_items(tmp_path, config)
    assert config.raters_per_item == 3 and config.task == "arena"
    assert [i.item_id for i in items] == ["d1"]
    assert items[0].total_audio_s == pytest.approx(3.5)


def test_missing_audio_names_line_and_field(tmp_path: Path) -> None:
    _study(tmp_path)
    (tmp_path / "audio" / "d1" / "a1.wav").unlink()
    with pytest.raises(ConfigError, match=r"items.jsonl:1: field 'stimuli.a1.path'"):
        load_study_items(tmp_path, load_study_config(tmp_path))


def test_path_outside_audio_is_refused(tmp_path: Path) -> None:
    _study(tmp_path)
    line = _item().model_dump_json().replace("audio/d1/u1.wav", "audio/../study.yaml")
    (tmp_path / "items.jsonl").write_text(line + "\n")
    with pytest.raises(ConfigError, match=r"items.jsonl:1: field 'stimuli.0.path'"):
        load_study_items(tmp_path, load_study_config(tmp_path))


def test_unknown_setting_is_named(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text("study_id: s\ntask: arena\ntitle: t\nraters: 3\n")
    with pytest.raises(ConfigError, match=r"study.yaml: field 'raters'"):
        load_study_config(tmp_path)
