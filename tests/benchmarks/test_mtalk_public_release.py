"""The public MTalk-Bench repository as shipped (a replica of its layout): ``data/sample.json``
names recordings none of which are where it says; the question recordings are flat under
``static/audio/`` and the replies' audio is absent. It loads 3 of 3 dialogues with 6 of 6
question recordings found, 7 of 7 models whose 42 replies are transcript-only, 0 problems,
and warns that the paralinguistic and ambient transcripts carry no cue."""

from __future__ import annotations

from pathlib import Path

import soundfile as sf

from tests.benchmarks.mtalk_public_repo import MODELS, STATIC_RATE, write_public_repo
from voxeval.benchmarks.mtalk.mtalk_audio_search import AudioSearch
from voxeval.benchmarks.mtalk.mtalk_release import import_mtalk_release


def test_the_data_folder_loads_every_dialogue_and_model(tmp_path: Path) -> None:
    sample = write_public_repo(tmp_path / "MTalk-Bench")
    static = tmp_path / "MTalk-Bench" / "static" / "audio"
    for source in (sample.parent, sample):  # the folder or the file
        result = import_mtalk_release(source)
        assert result.problems == []
        assert [d.id for d in result.dialogues] == ["para-1-1", "sem-1-1", "amb-1-1"]
        assert sorted(result.replies) == sorted(MODELS)
        assert result.audio_counts() == {
            "questions": {"total": 6, "with_audio": 6, "transcript_only": 0},
            "replies": {"total": 42, "with_audio": 0, "transcript_only": 42},
        }
    para = result.dialogues[0]
    assert para.turns[1].audio == str(static / "1-1-turn2_para.wav")
    assert sf.info(para.turns[1].audio).samplerate == STATIC_RATE
    gpt = {r.item_id: r for r in result.replies["GPT-4o"]}
    assert gpt["amb-1-1.turn2"].audio is None
    assert gpt["amb-1-1.turn2"].text == "GPT-4o answers amb turn 2"
    assert len(result.absent_audio) == 42
    assert "sem-1-1 turn 1 dialogue.Doubao: ./model_output/Doubao/sem/doubao_answer" in (
        "\n".join(result.absent_audio)
    )
    warnings = result.warnings()
    assert [w.split(":")[0] for w in warnings] == ["paralinguistic", "ambient"]
    assert "1 of 1 dialogues have no tag" in warnings[0]
    text = result.summary()
    assert "3 dialogues, 6 user turns, 7 models, 0 problems" in text
    assert "recordings found: 6 of 6 user turns, 0 of 42 replies" in text
    assert "transcript-only: 0 user turns, 42 replies" in text


def test_a_bare_file_name_shared_by_two_paths_is_not_searched(tmp_path: Path) -> None:
    (tmp_path / "static" / "audio").mkdir(parents=True)
    (tmp_path / "static" / "audio" / "1-1-turn1_sem_answer.wav").write_bytes(b"x")
    (tmp_path / "static" / "audio" / "q.wav").write_bytes(b"x")
    paths = ["./a/GLM/1-1-turn1_sem_answer.wav", "./a/GPT/1-1-turn1_sem_answer.wav", "./r/q.wav"]
    search = AudioSearch([tmp_path], paths)
    # whose reply it is cannot be told from the name: not taken
    assert search.find(paths[0]) is None
    assert search.find(paths[2]) == tmp_path / "static" / "audio" / "q.wav"
    (tmp_path / "a" / "GPT").mkdir(parents=True)
    (tmp_path / "a" / "GPT" / "1-1-turn1_sem_answer.wav").write_bytes(b"x")
    assert search.find(paths[1]) == (tmp_path / "a" / "GPT" / "1-1-turn1_sem_answer.wav")
