"""The dataset layout (one row per turn): JSONL with audio paths, parquet with embedded audio,
criteria read from the prompts, unreadable rows reported with their field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.mtalk_fixtures import (
    GENERAL_PROMPT,
    MODELS,
    write_dataset_jsonl,
    write_dataset_parquet,
)
from voxeval.audio import read_audio
from voxeval.benchmarks.mtalk.mtalk_dataset import import_mtalk_dataset, load_mtalk_dataset
from voxeval.errors import ConfigError


def _check_release(result_dialogues: list, replies: dict) -> None:
    by_id = {d.id: d for d in result_dialogues}
    assert sorted(by_id) == ["amb-9-1", "para-2-3"]
    para = by_id["para-2-3"]
    assert para.dimension == "paralinguistic"
    assert para.scenario == "health-medical"  # scene 2 in the paper's order
    assert [t.transcript for t in para.turns] == [
        "<anxious tone> question 1 of 2-3",
        "<anxious tone> question 2 of 2-3",
    ]
    assert para.turns[0].tags == ["<anxious tone>"]
    assert [c.id for c in para.rubrics.general] == ["criteria_s_1", "criteria_s_2"]
    assert [c.id for c in para.rubrics.dimension] == ["criteria_m_1"]
    assert [c.id for c in para.rubrics.sample] == ["criteria_d_1", "criteria_d_2"]
    assert para.rubrics.general[0].text == "Is the reply fluent and grammatical?"
    assert para.rubrics.sample[0].text == "Does the reply suggest a backup plan for bad weather?"
    assert para.metadata["reference_prompts"]["rubric_prompt_general"] == GENERAL_PROMPT.strip()
    assert by_id["amb-9-1"].scenario == "service-oriented"
    assert sorted(replies) == sorted(MODELS)
    qwen = {r.item_id: r for r in replies["Qwen-Omni"]}
    assert sorted(qwen) == ["para-2-3.turn1", "para-2-3.turn2"]
    assert qwen["para-2-3.turn2"].text == "Qwen-Omni reply 2"
    audio = read_audio(qwen["para-2-3.turn2"].audio)
    assert audio.rate == 24_000 and len(audio.samples) == 4800


def test_jsonl_folder_loads_with_zero_hand_edits(tmp_path: Path) -> None:
    folder = write_dataset_jsonl(tmp_path)
    result = load_mtalk_dataset(folder, audio_dir=tmp_path / "cache")
    _check_release(result.dialogues, result.replies)
    para = next(d for d in result.dialogues if d.id == "para-2-3")
    assert para.turns[1].audio == str((folder / "audio/2-3-turn2_para.wav").resolve())
    assert not (tmp_path / "cache").exists()  # nothing embedded, nothing written


def test_parquet_with_embedded_audio_loads_with_zero_hand_edits(tmp_path: Path) -> None:
    folder = write_dataset_parquet(tmp_path)
    result = load_mtalk_dataset(folder, audio_dir=tmp_path / "cache")
    _check_release(result.dialogues, result.replies)
    written = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(written) == 3 + 4  # 3 user turns, 2 models x 2 turns
    assert all(name.endswith(".wav") for name in written)


def _rewrite(folder: Path, edit) -> None:  # type: ignore[no-untyped-def]
    path = folder / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    edit(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_bad_criteria_ids_are_reported_with_their_field(tmp_path: Path) -> None:
    folder = write_dataset_jsonl(tmp_path)

    def edit(rows: list) -> None:
        rows[0]["rubric_prompt_specific"] = (
            "criteria_d_1: Does the reply offer a plan for rain?\n"
            "criteria_x_2: Does the reply mention umbrellas?\n"
            "criteria_d_0: Does the reply stay short?\n"
        )

    _rewrite(folder, edit)
    result = import_mtalk_dataset(folder, audio_dir=tmp_path / "cache")
    messages = [(p.where, p.field, p.message) for p in result.problems]
    assert ("row 1", "rubric_prompt_specific") in [(w, f) for w, f, _ in messages]
    bad = sorted(m for _, f, m in messages if f == "rubric_prompt_specific")
    assert any("'criteria_x_2' is not a criterion id" in m for m in bad)
    assert any("'criteria_d_0' is not a criterion id" in m for m in bad)
    # the first question row's prompts serve the dialogue: the second row's are not read
    assert not any("defined twice" in m for m in bad)
    para = next(d for d in result.dialogues if d.id == "para-2-3")
    assert [(c.id, c.text) for c in para.rubrics.sample] == [
        ("criteria_d_1", "Does the reply offer a plan for rain?")
    ]
    with pytest.raises(ConfigError, match="criteria_x_2"):
        load_mtalk_dataset(folder, audio_dir=tmp_path / "cache")


def test_unreadable_rows_name_file_row_and_field(tmp_path: Path) -> None:
    folder = write_dataset_jsonl(tmp_path)

    def edit(rows: list) -> None:
        rows[0]["type"] = "semantic-ish"
        rows[1]["audio"] = "audio/nowhere.wav"
        rows[4]["turn"] = "turn two"

    _rewrite(folder, edit)
    result = import_mtalk_dataset(folder, audio_dir=tmp_path / "cache")
    problems = {(Path(p.file).name, p.where, p.field) for p in result.problems}
    assert ("test.jsonl", "row 1", "type") in problems
    assert ("test.jsonl", "row 2", "audio") in problems
    assert ("test.jsonl", "row 5", "turn") in problems
    # para 2-3 lost its turn-1 question row: its user turns are no longer 1..n
    gap = next(p for p in result.problems if p.where == "row 4")
    assert gap.field == "turn" and "para-2-3" in gap.message
    missing = next(p for p in result.problems if p.field == "audio")
    assert "nowhere.wav" in missing.message
    assert [d.id for d in result.dialogues] == ["amb-9-1"]

    def empty_last(rows: list) -> None:
        rows[-1]["transcription"] = ""

    _rewrite(folder, empty_last)
    with pytest.raises(ConfigError, match=r"no dialogue could be read(.|\n)*row 7: transcription"):
        import_mtalk_dataset(folder, audio_dir=tmp_path / "cache")


def test_a_missing_folder_or_parquet_without_rows_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        import_mtalk_dataset(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no \.parquet, \.jsonl or \.json files"):
        import_mtalk_dataset(tmp_path / "empty")


def test_criteria_come_from_the_first_question_row_with_prompts(tmp_path: Path) -> None:
    folder = write_dataset_jsonl(tmp_path)

    def edit(rows: list) -> None:
        for key in ("rubric_prompt_general", "rubric_prompt_specific", "arena_prompt"):
            rows[0][key] = ""  # para 2-3 turn 1
        rows[3]["rubric_prompt_specific"] = "criteria_d_1: Does it name the venue?\ncriteria_d_x"

    _rewrite(folder, edit)
    result = import_mtalk_dataset(folder, audio_dir=tmp_path / "cache")
    para = next(d for d in result.dialogues if d.id == "para-2-3")
    assert [c.text for c in para.rubrics.sample] == ["Does it name the venue?"]
    assert [c.id for c in para.rubrics.general] == ["criteria_s_1", "criteria_s_2"]
    assert para.metadata["reference_prompts"]["arena_prompt"].startswith("Compare the two")
    [problem] = result.problems
    assert (problem.where, problem.field) == ("row 4", "rubric_prompt_specific")
    assert "'criteria_d_x' is not a criterion id" in problem.message
