"""A recorded call is read through the run format: a call.json that does not validate is an
error naming the file and the field, before anything scores it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxeval.runformat import ArtifactFormatError
from voxeval.simulation.recorder import CALL_FILE, load_call


def test_a_malformed_call_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    call = {"end_reason": "user_end_call", "error": None, "duration_s": "a minute"}
    (tmp_path / CALL_FILE).write_text(json.dumps(call), encoding="utf-8")
    with pytest.raises(ArtifactFormatError, match=rf"^{tmp_path / CALL_FILE}: duration_s: "):
        load_call(tmp_path)


def test_a_missing_call_file_says_the_call_was_not_recorded(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="the call was not recorded"):
        load_call(tmp_path)
