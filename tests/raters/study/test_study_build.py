"""Building study folders from real (tiny) runs made by ``voxeval run``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import soundfile
from typer.testing import CliRunner

from tests.raters.study_runs import multi_turn_run, single_turn_run
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.raters.study.study_build import StudyOptions, build_study
from voxeval.raters.study.study_files import load_study_config, load_study_items


@pytest.fixture(scope="module")
def mt_run(tmp_path_factory) -> Path:
    return multi_turn_run(tmp_path_factory.mktemp("mt"))


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def test_arena_study_pairs_stimuli_and_gold(mt_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "arena"
    result = CliRunner().invoke(
        app, ["raters", "study", str(mt_run), "--task", "arena", "--out", str(out), "--gold", "2"]
    )
    assert result.exit_code == 0, result.output
    config = load_study_config(out)
    items = load_study_items(out, config)  # also checks every stimulus file exists
    assert config.task == "arena" and config.source_run == str(mt_run.resolve())
    normal = [i for i in items if i.kind == "normal"]
    # 2 dialogues x 3 unordered pairs of the 3 systems
    assert sorted(i.item_id for i in normal) == [
        f"arena:{d}:{a}~{b}"
        for d in ("d1", "d2")
        for a, b in (("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma"))
    ]
    item = next(i for i in normal if i.item_id == "arena:d1:alpha~gamma")
    assert item.systems == {"a": "alpha", "b": "gamma"}
    assert [s.id for s in item.stimuli] == ["u1", "a1", "b1", "u2", "a2", "b2"]
    assert [s.role for s in item.stimuli] == ["user", "a", "b"] * 2
    assert item.title == "Semantic dimension; capability: Understanding & Memory"
    assert item.dimension == "semantic" and item.source["item"] == "d1"
    by_id = {s.id: s for s in item.stimuli}
    # the exact bytes of the run's files, durations measured from them
    unit = mt_run / "items" / "d1" / "gamma" / "0"
    assert _bytes(out / by_id["b2"].path) == _bytes(unit / "reply_2.wav")
    assert by_id["b2"].duration_s == pytest.approx(0.3)  # 0.2 + 0.05 x 2
    suite_audio = mt_run.parent / "suite" / "audio" / "d1_1.wav"
    assert _bytes(out / by_id["u1"].path) == _bytes(suite_audio)
    assert by_id["u1"].duration_s == pytest.approx(0.5)
    assert item.total_audio_s == pytest.approx(0.5 + 0.25 + 0.25 + 0.6 + 0.3 + 0.3)

    gold = [i for i in items if i.kind == "gold"]
    assert len(gold) == 2 and config.gold_every == 2  # 6 normal items, 2 gold
    for g in gold:
        base = next(i for i in normal if i.item_id == g.source["gold_of"])
        broken = g.source["broken"]
        assert g.gold == {"choice": "b" if broken == "a" else "a"}
        assert g.systems == base.systems
        for stimulus, original in zip(g.stimuli, base.stimuli, strict=True):
            same = _bytes(out / stimulus.path) == _bytes(out / original.path)
            assert same == (stimulus.role != broken)  # only the broken side was replaced
            info = soundfile.info(str(out / stimulus.path))
            assert stimulus.duration_s == pytest.approx(info.duration)
        clip = next(s for s in g.stimuli if s.role == broken)
        assert clip.duration_s > 1.0  # the attention clip, never a short reply


def test_same_seed_same_bytes_other_seed_other_gold(mt_run: Path, tmp_path: Path) -> None:
    def build(name: str, seed: int) -> Path:
        build_study(mt_run, tmp_path / name, StudyOptions(task="arena", gold=3, seed=seed))
        return tmp_path / name

    first, again, other = build("a", 7), build("b", 7), build("c", 8)
    assert _bytes(first / "items.jsonl") == _bytes(again / "items.jsonl")
    for path in sorted((first / "audio").rglob("*.wav")):
        assert _bytes(path) == _bytes(again / path.relative_to(first))

    def golds(folder: Path) -> list[tuple[str, str]]:
        rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
        return [
            (r["source"]["gold_of"], r["source"]["broken"]) for r in rows if r["kind"] == "gold"
        ]

    assert golds(first) != golds(other)


def test_filters_rubric_and_record_from_dialogues(mt_run: Path, tmp_path: Path) -> None:
    built = build_study(
        mt_run,
        tmp_path / "rubric",
        StudyOptions(task="rubric", systems=("beta",), dimensions=("ambient",), gold=1),
    )
    normal = [i for i in built.items if i.kind == "normal"]
    assert [i.item_id for i in normal] == ["rubric:d2:beta"]
    item = normal[0]
    # accepted criteria only (the rejected draft is left out), as the LLM judge grades them
    assert [(c.id, c.text) for c in item.criteria] == [
        ("criteria_s_1", "Is it coherent?"),
        ("criteria_d_1", "Does it answer?"),
    ]
    assert [s.id for s in item.stimuli] == ["u1", "r1", "u2", "r2"]
    assert item.systems == {"reply": "beta"}
    gold = next(i for i in built.items if i.kind == "gold")
    assert gold.gold == {"criteria": {"criteria_s_1": 0, "criteria_d_1": 0}}

    record = build_study(mt_run, tmp_path / "record", StudyOptions(task="record", limit=1))
    assert [i.item_id for i in record.items] == ["record:d1:turn1", "record:d1:turn2"]
    assert record.items[1].prompt_text == "d1 turn 2"
    assert record.items[1].context == "Say it this way: <calm tone>"
    assert record.items[1].stimuli[0].role == "example"
    assert record.config.sample_rate == 16000  # the suite's recordings


def test_mistakes_are_named(mt_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--task score"):
        build_study(mt_run, tmp_path / "s", StudyOptions(task="score"))
    with pytest.raises(ConfigError, match="--systems: delta"):
        build_study(mt_run, tmp_path / "s", StudyOptions(task="arena", systems=("delta",)))
    with pytest.raises(ConfigError, match="--gold: the record task"):
        build_study(mt_run, tmp_path / "s", StudyOptions(task="record", gold=1))
    build_study(mt_run, tmp_path / "ok", StudyOptions(task="rubric"))
    with pytest.raises(ConfigError, match="already holds a study"):
        build_study(mt_run, tmp_path / "ok", StudyOptions(task="rubric"))


def test_missing_reply_file_names_the_run_file_and_field(mt_run: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(mt_run, tmp_path / "run"))  # the module's run stays whole
    (run / "items" / "d2" / "beta" / "0" / "reply_2.wav").unlink()
    with pytest.raises(ConfigError) as error:
        build_study(run, tmp_path / "s", StudyOptions(task="arena"))
    message = str(error.value)
    assert "d2/beta/0/dialogue.json: field turns[1].reply_audio" in message
    assert "reply_2.wav" in message


@pytest.mark.models
def test_single_turn_score_rubric_and_record(tmp_path: Path) -> None:
    run = single_turn_run(tmp_path)
    built = build_study(run, tmp_path / "score", StudyOptions(task="score", gold=1, limit=1))
    normal = [i for i in built.items if i.kind == "normal"]
    assert [i.item_id.split(":")[2] for i in normal] == ["alpha", "beta"]  # q1 only
    item = normal[0]
    assert item.checklist == ["Answers q1", "Is polite"]
    assert [s.id for s in item.stimuli] == ["query", "reply"]
    unit = run / "items" / item.source["item"] / "alpha" / "0"
    assert _bytes(tmp_path / "score" / item.stimuli[1].path) == _bytes(unit / "assistant.wav")
    assert item.source["query_id"] == "q1"
    assert next(i for i in built.items if i.kind == "gold").gold == {"min": 1, "max": 2}

    rubric = build_study(run, tmp_path / "rubric", StudyOptions(task="rubric"))
    assert [c.text for c in rubric.items[0].criteria] == ["Answers q1", "Is polite"]

    record = build_study(run, tmp_path / "record", StudyOptions(task="record"))
    assert [i.prompt_text for i in record.items] == [
        "How long do I boil an egg?",
        "What's the weather like?",
    ]
    assert record.config.sample_rate == 22050  # the suite's recordings are 22.05 kHz


def test_a_system_fault_plays_the_no_reply_cue(tmp_path: Path) -> None:
    """An HTTP system that fails turn 2 of d1: its arena items keep the dialogue, with the
    "no spoken response" cue where the reply would be, and name the fault."""
    import base64
    import re

    from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, error
    from tests.raters.study_runs import tone
    from voxeval.audio import audio_to_wav_bytes

    def live(path: str, body: bytes) -> FakeResponse:
        found = re.search(rb'name="item_id"\r\n\r\n(d\d\.turn\d)', body)
        assert found is not None
        if found.group(1) == b"d1.turn2":
            return error(400, "bad request")
        wav = base64.b64encode(audio_to_wav_bytes(tone(0.3, 800))).decode()
        return FakeResponse(json_body={"audio": wav, "text": "live"})

    with FakeOpenAIServer(live) as server:
        system = {"name": "live", "type": "http", "url": server.url + "/reply"}
        run = multi_turn_run(tmp_path, extra_systems=[system])
    built = build_study(run, tmp_path / "s", StudyOptions(task="arena", systems=("alpha", "live")))
    item = next(i for i in built.items if i.item_id == "arena:d1:alpha~live")
    assert set(item.source["system_faults"]) == {"live"}
    assert item.source["missing_replies"] == {"b": [2]}
    cue = next(s for s in item.stimuli if s.id == "b2")
    assert cue.duration_s > 0.5 and cue.path.endswith("b2.wav")
    unit = run / "items" / "d1" / "live" / "0"
    assert not (unit / "reply_2.wav").exists()
    answered = next(s for s in item.stimuli if s.id == "b1")
    assert _bytes(tmp_path / "s" / answered.path) == _bytes(unit / "reply_1.wav")
