"""Records written one field per line: the same JSON as before, fields on their own lines,
secrets redacted on the way out."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.atomic_files import record_json, write_record_json_atomic
from voxeval.redaction import REDACTED, add_secrets

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(record=st.dictionaries(st.text(max_size=8), VALUES, max_size=6))
def test_a_record_reads_back_as_written_with_one_field_per_line(record: dict) -> None:
    text = record_json(record)
    assert json.loads(text) == record
    assert text.endswith("\n")
    lines = text.splitlines()
    if record:
        assert lines[0] == "{" and lines[-1] == "}"
        assert len(lines) == len(record) + 2  # strings keep their newlines escaped
        # each line starts with its key (which may itself hold ": ")
        keys = [json.JSONDecoder().raw_decode(line.strip())[0] for line in lines[1:-1]]
        assert keys == sorted(record)
    else:
        assert lines == ["{}"]


def test_a_scores_record_looks_like_this() -> None:
    record = {"wer": {"value": 0.25, "passed": None}, "duration": {"value": 1.5, "details": {}}}
    assert record_json(record) == (
        "{\n"
        '  "duration": {"details": {}, "value": 1.5},\n'
        '  "wer": {"passed": null, "value": 0.25}\n'
        "}\n"
    )


def test_values_json_cannot_encode_are_written_as_text(tmp_path: Path) -> None:
    path = tmp_path / "reply.json"
    write_record_json_atomic(path, {"path": tmp_path, "n": 1})
    assert json.loads(path.read_text()) == {"path": str(tmp_path), "n": 1}


def test_a_secret_is_redacted_from_a_record(tmp_path: Path) -> None:
    add_secrets(["sk-record-1234567890"])
    path = tmp_path / "scores.json"
    write_record_json_atomic(path, {"judge": {"error": "401 for key sk-record-1234567890"}})
    assert json.loads(path.read_text()) == {"judge": {"error": f"401 for key {REDACTED}"}}
