"""Suite files: validation errors name the file, the item and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from voxeval.benchmarks.wildspeech.query_suite import load_query_suite
from voxeval.benchmarks.wildspeech.spoken_query import Assertion, SpokenQuery
from voxeval.errors import ConfigError


def _suite(tmp_path: Path, queries: list[dict]) -> Path:
    path = tmp_path / "suite.yaml"
    data = {"name": "t", "protocol": "single_turn", "queries": queries}
    path.write_text(yaml.safe_dump(data))
    return path


GOOD = {"id": "q1", "text": "What time is it?", "category": "II", "checklist": ["Gives the time."]}


def test_valid_suite_loads_from_file_and_folder(tmp_path: Path) -> None:
    path = _suite(tmp_path, [GOOD])
    assert [q.id for q in load_query_suite(path)] == ["q1"]
    assert [q.id for q in load_query_suite(tmp_path)] == ["q1"]


def test_error_names_file_item_and_field(tmp_path: Path) -> None:
    bad = {**GOOD, "id": "q2", "category": "XX"}
    path = _suite(tmp_path, [GOOD, bad])
    with pytest.raises(ConfigError) as err:
        load_query_suite(path)
    message = str(err.value)
    assert str(path) in message
    assert "item #2 (id='q2')" in message
    assert "category" in message


def test_pf_needs_known_subcategory(tmp_path: Path) -> None:
    bad = {**GOOD, "id": "pf1", "category": "PF", "subcategory": "whisper"}
    with pytest.raises(ConfigError, match=r"pf1.*subcategory: .*PF queries need subcategory"):
        load_query_suite(_suite(tmp_path, [bad]))


def test_prosody_mark_word_must_be_in_text(tmp_path: Path) -> None:
    bad = {
        **GOOD,
        "category": "PF",
        "subcategory": "pause",
        "render": {"marks": [{"kind": "pause", "word": "banana"}]},
    }
    with pytest.raises(ConfigError, match=r"render: .*banana"):
        load_query_suite(_suite(tmp_path, [bad]))


def test_duplicate_ids_and_missing_audio_are_reported(tmp_path: Path) -> None:
    missing = {**GOOD, "id": "q3", "audio": "nope.wav"}
    with pytest.raises(ConfigError) as err:
        load_query_suite(_suite(tmp_path, [GOOD, GOOD, missing]))
    assert "item #2 (id='q1'): id: duplicate" in str(err.value)
    assert "item #3 (id='q3'): audio: file not found" in str(err.value)


def test_unknown_field_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"checklists"):
        load_query_suite(_suite(tmp_path, [{**GOOD, "checklists": []}]))


def test_header_errors_name_field(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "protocol": "multi_turn", "queries": [GOOD]}))
    with pytest.raises(ConfigError, match=r"suite.yaml: protocol"):
        load_query_suite(path)


def test_jsonl_suite_with_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "id": "q2", "text": ""}) + "\n")
    with pytest.raises(ConfigError, match=r"q.jsonl: item #2 \(id='q2'\): text"):
        load_query_suite(path)
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(ConfigError, match="line 2: invalid JSON"):
        load_query_suite(path)


def test_number_assertion_values_must_be_numbers() -> None:
    with pytest.raises(ValueError, match="not a number"):
        Assertion(kind="number", values=["twelve"])


def test_report_group_and_spoken_text() -> None:
    q = SpokenQuery.model_validate(
        {
            "id": "p",
            "text": "I never said that",
            "category": "PF",
            "subcategory": "stress",
            "render": {
                "tts_text": "I never said that.",
                "marks": [{"kind": "stress", "word": "never"}],
            },
        }
    )
    assert q.report_group == "PF/stress"
    assert q.spoken_text == "I never said that."
