"""Layout detection, and a dataset supplemented with a model-outputs file's replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.mtalk_fixtures import write_dataset_jsonl, write_model_outputs, write_wav
from voxeval.benchmarks.mtalk.mtalk_release import detect_layout, import_mtalk_release
from voxeval.errors import ConfigError


def _outputs_for_para_2_3(root: Path) -> Path:
    """A model-outputs file with VITA's replies to para 2-3 turns 1..3 and GPT-4o's turn 1."""
    turns = []
    for turn in (1, 2, 3):
        question = f"./audio/record_2-3/2-3-turn{turn}_para.wav"
        write_wav(root / question)
        answers = {"VITA": f"./vita/2-3-turn{turn}.wav"}
        if turn == 1:
            answers["GPT-4o"] = "./gpt/2-3-turn1.wav"
        for path in answers.values():
            write_wav(root / path, 700)
        turns.append(
            {
                "question": question,
                "dialogue": answers,
                "question_transcription": f"question {turn}",
                "dialogue_transcription": {"VITA": f"vita {turn}"},
            }
        )
    path = root / "outputs.json"
    path.write_text(json.dumps({"Paralinguistic information": [turns]}))
    return path


def test_layouts_are_told_apart(tmp_path: Path) -> None:
    assert detect_layout(write_model_outputs(tmp_path / "a")) == "model-outputs"
    folder = write_dataset_jsonl(tmp_path / "b")
    assert detect_layout(folder) == "dataset"
    assert detect_layout(folder / "test.jsonl") == "dataset"
    with pytest.raises(ConfigError, match="not found"):
        detect_layout(tmp_path / "nothing.json")


def test_outputs_supplement_the_dataset_without_overriding_it(tmp_path: Path) -> None:
    folder = write_dataset_jsonl(tmp_path)
    outputs = _outputs_for_para_2_3(tmp_path / "extra")
    result = import_mtalk_release(folder, tmp_path / "cache", outputs=[outputs])
    vita = {r.item_id: r.text for r in result.replies["VITA"]}
    assert vita == {"para-2-3.turn1": "vita 1", "para-2-3.turn2": "vita 2"}
    gpt = [r for r in result.replies["GPT-4o"] if r.item_id == "para-2-3.turn1"]
    assert [r.text for r in gpt] == ["GPT-4o reply 1"]  # the dataset's reply is kept
    problems = sorted((p.where, p.field, p.message) for p in result.problems)
    assert problems == [
        (
            "para-2-3 turn1",
            "dialogue.GPT-4o",
            "the dataset already has this reply (kept the dataset's)",
        ),
        ("para-2-3 turn3", "dialogue.VITA", "not in the dataset"),
    ]
    assert all(p.file == str(outputs.resolve()) for p in result.problems)
    with pytest.raises(ConfigError, match="supplement a dataset"):
        import_mtalk_release(outputs, outputs=[outputs])
