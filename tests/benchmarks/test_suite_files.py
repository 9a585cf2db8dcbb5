"""What the query and dialogue suite loaders share: the suite file, its header, row labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxeval.benchmarks.mtalk.dialogue_suite import dialogue_suite_path, read_dialogue_suite_header
from voxeval.benchmarks.suite_files import placed_audio, row_label, suite_file_candidate
from voxeval.benchmarks.wildspeech.query_suite import read_suite_header, suite_file_path
from voxeval.errors import ConfigError


def test_a_folder_means_its_suite_yaml_and_each_loader_keeps_its_message(tmp_path: Path) -> None:
    assert suite_file_candidate(tmp_path) == tmp_path / "suite.yaml"
    assert suite_file_candidate(str(tmp_path / "x.yaml")) == tmp_path / "x.yaml"
    with pytest.raises(ConfigError, match=r"suite.yaml: suite file not found"):
        suite_file_path(tmp_path)
    with pytest.raises(ConfigError, match=r"suite.yaml: dialogue suite file not found"):
        dialogue_suite_path(tmp_path)
    (tmp_path / "suite.yaml").write_text("- a list\n", encoding="utf-8")
    assert suite_file_path(tmp_path) == tmp_path / "suite.yaml"
    with pytest.raises(ConfigError, match=r"expected a mapping with name, protocol and queries"):
        read_suite_header(tmp_path / "suite.yaml")
    with pytest.raises(ConfigError, match=r"expected a mapping with name, protocol and dialogues"):
        read_dialogue_suite_header(tmp_path / "suite.yaml")


def test_row_labels_and_audio_placement(tmp_path: Path) -> None:
    assert row_label({"id": "q1"}, 0, "item") == "item #1 (id='q1')"
    assert row_label(["not a mapping"], 2, "dialogue") == "dialogue #3"
    assert placed_audio("a.wav", tmp_path) == (tmp_path / "a.wav").resolve()
    assert placed_audio("/abs/a.wav", tmp_path) == Path("/abs/a.wav")


def test_unique_rows_yields_valid_rows_and_lists_every_problem_with_its_label() -> None:
    from pydantic import BaseModel

    from voxeval.benchmarks.suite_files import unique_rows

    class Row(BaseModel):
        id: str
        n: int

    rows = [
        {"id": "a", "n": 1},
        "text",
        {"id": "b", "n": "x"},
        {"id": "a", "n": 2},
        {"id": "c", "n": 3},
    ]
    problems: list[str] = []
    kept = list(unique_rows(rows, "s.yaml", Row, "item", lambda r: r.id, problems))
    assert [(label, row.id) for label, row in kept] == [
        ("s.yaml: item #1 (id='a')", "a"),
        ("s.yaml: item #5 (id='c')", "c"),
    ]
    assert problems[0] == "s.yaml: item #2: expected a mapping, got str"
    assert problems[1].startswith("s.yaml: item #3 (id='b')")
    assert problems[2] == "s.yaml: item #4 (id='a'): id: duplicate of item #1"
    assert len(problems) == 3
