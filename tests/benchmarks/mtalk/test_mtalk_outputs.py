"""The model-outputs (``sample.json``) layout: loads with zero hand edits, ids from the
question path, paths relative to the file, missing audio named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.mtalk_fixtures import MODELS, write_model_outputs
from voxeval.benchmarks.mtalk.mtalk_outputs import (
    import_model_outputs,
    load_model_outputs,
    record_number,
)
from voxeval.errors import ConfigError


def test_record_number_comes_from_the_question_path() -> None:
    assert record_number("./audio_new/scene3/record_3-2/3-2-turn1_sem.wav") == "3-2"
    assert record_number("/x/record_12-10/a.wav") == "12-10"
    assert record_number("./audio/3-2-turn1_sem.wav") is None


def test_loads_every_dimension_with_zero_hand_edits(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path)
    result = load_model_outputs(sample)
    ids = [d.id for d in result.dialogues]
    assert ids == ["sem-1-1", "sem-3-2", "para-1-1", "amb-1-1"]
    by_id = {d.id: d for d in result.dialogues}
    sem = by_id["sem-3-2"]
    assert sem.dimension == "semantic"
    assert sem.scenario == "institutional-inquiry"  # scene 3 in the paper's order
    assert by_id["amb-1-1"].scenario == "family-domestic"
    assert [t.transcript for t in sem.turns] == [
        "user words of sem 3-2 turn 1",
        "user words of sem 3-2 turn 2",
        "user words of sem 3-2 turn 3",
    ]
    # relative to the file's folder, not to the working directory
    expected = (sample.parent / "audio_new/scene3/record_3-2/3-2-turn2_sem.wav").resolve()
    assert sem.turns[1].audio == str(expected)
    assert sorted(result.replies) == sorted(MODELS)
    gpt = {r.item_id: r for r in result.replies["GPT-4o"]}
    assert len(gpt) == 2 + 3 + 2 + 2
    reply = gpt["sem-3-2.turn3"]
    assert reply.text == "GPT-4o says turn 3 of 3-2"
    assert reply.audio.endswith("model_output/GPT4o/scene3/record_3-2/3-2-turn3_sem_answer.wav")
    assert result.problems == []


def test_a_missing_question_recording_loads_the_turn_transcript_only(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path)
    gone = sample.parent / "audio_new/scene3/record_3-2/3-2-turn2_sem.wav"
    gone.unlink()
    result = import_model_outputs(sample)
    assert result.problems == []
    sem = {d.id: d for d in result.dialogues}["sem-3-2"]
    assert sem.turns[1].audio is None
    assert sem.turns[1].transcript == "user words of sem 3-2 turn 2"
    assert result.absent_audio == [
        "sem-3-2 turn 2 question: ./audio_new/scene3/record_3-2/3-2-turn2_sem.wav"
    ]
    assert result.audio_counts()["questions"] == {
        "total": 9, "with_audio": 8, "transcript_only": 1
    }  # fmt: skip
    # a recording that is there but empty is still a problem, and drops its dialogue
    gone.write_bytes(b"")
    result = import_model_outputs(sample)
    assert "sem-3-2" not in [d.id for d in result.dialogues]
    [problem] = result.problems
    assert (problem.field, problem.where) == ("question", "'Semantic information'[1] turn 2")
    assert all(not r.item_id.startswith("sem-3-2") for r in result.replies["GPT-4o"])
    with pytest.raises(ConfigError, match=r"3-2-turn2_sem\.wav: empty file"):
        load_model_outputs(sample)


def test_a_missing_reply_recording_replays_its_transcript(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path)
    gone = sample.parent / "model_output/qwen2.5-omni-7b/scene1/record_1-1/1-1-turn2_amb_answer.wav"
    gone.unlink()
    result = import_model_outputs(sample)
    assert result.problems == []
    qwen = {r.item_id: r for r in result.replies["Qwen-Omni"]}
    assert qwen["amb-1-1.turn2"].audio is None
    assert qwen["amb-1-1.turn2"].text == "Qwen-Omni says turn 2 of 1-1"
    assert qwen["amb-1-1.turn1"].audio is not None
    # without a transcription there is nothing to replay: a problem, that reply dropped
    data = json.loads(sample.read_text())
    data["Ambient sound"][0][1]["dialogue_transcription"].pop("Qwen-Omni")
    sample.write_text(json.dumps(data))
    result = import_model_outputs(sample)
    [problem] = result.problems
    assert problem.field == "dialogue.Qwen-Omni"
    assert "1-1-turn2_amb_answer.wav" in problem.message
    assert "no dialogue_transcription" in problem.message
    qwen_ids = {r.item_id for r in result.replies["Qwen-Omni"]}
    assert "amb-1-1.turn2" not in qwen_ids and "amb-1-1.turn1" in qwen_ids
    assert "amb-1-1.turn2" in {r.item_id for r in result.replies["GPT-4o"]}


def test_unknown_top_level_key_and_pathless_question_are_reported(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path)
    data = json.loads(sample.read_text())
    bad = dict(data, **{"Semantic Information": []})
    other = tmp_path / "bad.json"
    other.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match=r"unknown top-level key.*'Semantic Information'"):
        import_model_outputs(other)
    data["Ambient sound"][0][0]["question"] = "./somewhere/1-1-turn1_amb.wav"
    data["Ambient sound"][0][1].pop("question_transcription")
    sample.write_text(json.dumps(data))
    result = import_model_outputs(sample)
    fields = sorted((p.where, p.field) for p in result.problems)
    # the path names no record (its recording, found nowhere, would load transcript-only)
    assert fields == [
        ("'Ambient sound'[0] turn 1", "question"),
        ("'Ambient sound'[0] turn 2", "question_transcription"),
    ]
    assert "amb-1-1" not in [d.id for d in result.dialogues]


def test_audio_root_progress_and_an_empty_recording(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path)
    # the reference scripts resolve paths from the folder above data/: same file, moved audio
    for child in ("audio_new", "model_output"):
        (sample.parent / child).rename(tmp_path / child)
    calls: list[tuple[int, int]] = []
    result = import_model_outputs(sample, lambda d, t: calls.append((d, t)), audio_root=tmp_path)
    assert result.problems == [] and len(result.dialogues) == 4
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    # without a root, the folder above data/ is searched too (the reference's own base)
    assert import_model_outputs(sample).audio_counts()["replies"]["with_audio"] == 18
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(ConfigError, match="audio root folder not found"):
        import_model_outputs(sample, audio_root=other / "nothing")
    empty = tmp_path / "model_output/GPT4o/scene1/record_1-1/1-1-turn1_sem_answer.wav"
    empty.write_bytes(b"")
    result = import_model_outputs(sample, audio_root=tmp_path)
    [problem] = result.problems
    assert problem.field == "dialogue.GPT-4o"
    assert problem.message == f"{empty}: empty file"
