"""``voxeval mtalk-suite`` end to end: both reference layouts become a dialogue suite and
replay systems that answer each user turn with the released reply."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from tests.benchmarks.mtalk_fixtures import (
    MODELS,
    tone,
    write_dataset_parquet,
    write_model_outputs,
)
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.cli.main import app
from voxeval.config import load_run_config
from voxeval.systems.base import Turn
from voxeval.systems.factory import build_system

runner = CliRunner()


def _systems(out: Path) -> dict[str, object]:
    """The written systems snippet as a run config placed in the suite folder."""
    snippet = yaml.safe_load((out / "systems.yaml").read_text())
    config = out / "run.yaml"
    config.write_text(yaml.safe_dump({"suite": ".", **snippet}))
    return {spec.name: build_system(spec) for spec in load_run_config(config).systems}


def test_model_outputs_file_becomes_suite_and_replay_systems(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path / "release")
    out = tmp_path / "mtalk"
    result = runner.invoke(app, ["mtalk-suite", str(sample), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    written = json.loads(result.stdout)
    assert written["dialogues"] == 4 and written["turns"] == 2 + 3 + 2 + 2
    assert written["models"] == {"GPT-4o": 9, "Qwen-Omni": 9}
    suite = load_dialogue_suite(out)
    assert suite.name == "mtalk"
    assert [d.id for d in suite.dialogues] == ["sem-1-1", "sem-3-2", "para-1-1", "amb-1-1"]
    systems = _systems(out)
    assert sorted(systems) == sorted(MODELS)
    dialogue = suite.by_id()["sem-3-2"]
    history = [
        Turn(role="user", text=dialogue.turns[0].transcript, item_id=dialogue.item_ids()[0]),
        Turn(role="assistant", text="earlier reply"),
        Turn(role="user", text=dialogue.turns[1].transcript, item_id=dialogue.item_ids()[1]),
    ]
    reply = systems["Qwen-Omni"].reply(history)  # type: ignore[attr-defined]
    assert reply.text == "Qwen-Omni says turn 2 of 3-2"
    assert reply.details == {"replayed": True}
    # the fixture's Qwen reply to turn 2: a 570 Hz tone (500 + 50 * model index + 10 * turn)
    assert np.allclose(reply.audio.samples, tone(freq=570.0), atol=1e-3)


def test_dataset_folder_with_progress_and_text_summary(tmp_path: Path) -> None:
    folder = write_dataset_parquet(tmp_path)
    out = tmp_path / "mt"
    result = runner.invoke(app, ["mtalk-suite", str(folder), "-o", str(out), "--name", "mtb"])
    assert result.exit_code == 0, result.output
    # the console folds long lines at its width (paths make them long): compare words
    assert "2 dialogues, 3 user turns, 2 models, 0 problems" in " ".join(result.output.split())
    suite = load_dialogue_suite(out / "suite.yaml")
    assert suite.name == "mtb"
    para = suite.by_id()["para-2-3"]
    assert len(para.rubrics.used()) == 5
    # embedded recordings were written inside the suite folder
    assert Path(para.turns[0].audio or "").parent == (out / "audio").resolve()
    reply = _systems(out)["GPT-4o"].reply(  # type: ignore[attr-defined]
        [Turn(role="user", item_id="para-2-3.turn1")]
    )
    assert reply.text == "GPT-4o reply 1"


def test_unreadable_turns_stop_the_import_unless_skipped(tmp_path: Path) -> None:
    sample = write_model_outputs(tmp_path / "release")
    gone = sample.parent / "audio_new/scene1/record_1-1/1-1-turn2_para.wav"
    gone.write_bytes(b"")  # there, but unreadable (an absent one loads transcript-only)
    out = tmp_path / "mtalk"
    result = runner.invoke(app, ["mtalk-suite", str(sample), "-o", str(out)])
    assert result.exit_code == 2
    compact = "".join(result.output.split())  # the console folds long lines, even in paths
    assert "'Paralinguisticinformation'[0]turn2:question:" in compact
    assert f"{gone.resolve()}:emptyfile" in compact
    assert "--skip-unreadable" in result.output
    assert not (out / "suite.yaml").exists()
    result = runner.invoke(
        app, ["mtalk-suite", str(sample), "-o", str(out), "--skip-unreadable", "--json"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads(result.stdout)
    assert written["dialogues"] == 3
    [problem] = written["problem_list"]
    assert problem["field"] == "question"
    assert problem["message"].endswith("1-1-turn2_para.wav: empty file")
    report = json.loads((out / "import.json").read_text())
    assert report["problem_list"] == written["problem_list"]


def test_a_refused_dataset_import_leaves_no_audio_behind(tmp_path: Path) -> None:
    folder = write_dataset_parquet(tmp_path)
    [data_file] = folder.rglob("*.parquet")
    rows = pq.read_table(data_file).to_pylist()
    rows[3]["turn"] = "third"  # para 2-3's second question row
    pq.write_table(pa.Table.from_pylist(rows), data_file)
    out = tmp_path / "mt"
    result = runner.invoke(app, ["mtalk-suite", str(folder), "-o", str(out)])
    assert result.exit_code == 2
    compact = "".join(result.output.split())
    assert "row4:turn:expectedturn1,turn2,...,got'third'" in compact
    assert not (out / "audio").exists() and not (out / "suite.yaml").exists()
