"""Run folders: ``--no-resume`` never wipes a folder that is not a run, a resumed run leaves
no temporary files, and a run folder keeps a copy of its suite so ``report``/``score`` work
after the suite moved."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import tests.runner.toy_protocol  # noqa: F401  (registers the toy protocol)
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.toy_protocol import write_config, write_suite
from tests.simulation.helpers import scenario
from tests.simulation.helpers import write_suite as write_call_suite
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.benchmarks.suite_info import definition_files, resolve_suite, save_suite_copy
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.protocols.single_turn_replies import link_into
from voxeval.store import RunStore

cli = CliRunner()


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# -- --no-resume ------------------------------------------------------------------------------


def foreign_folder(path: Path) -> dict[str, bytes]:
    for name in ("items/mine.txt", "report/draft.md", "notes.txt"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(f"precious {name}")
    return files_under(path)


def test_no_resume_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg.yaml", write_suite(tmp_path / "suite", n_items=2))
    out = tmp_path / "mine"
    before = foreign_folder(out)
    result = cli.invoke(app, ["run", str(config), "--out", str(out), "--no-resume"])
    assert result.exit_code == 2
    assert "nothing was deleted" in " ".join(result.output.split())
    assert files_under(out) == before  # nothing deleted, nothing added


def test_reset_refuses_a_folder_that_was_not_a_run_when_opened(tmp_path: Path) -> None:
    before = foreign_folder(tmp_path / "mine")
    store = RunStore(tmp_path / "mine")
    with pytest.raises(ConfigError, match="refusing --no-resume"):
        store.reset()
    after = files_under(tmp_path / "mine")
    assert {k: v for k, v in after.items() if k in before} == before


def test_no_resume_still_starts_over_in_a_run_folder_or_an_empty_one(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg.yaml", write_suite(tmp_path / "suite", n_items=2))
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "run", tmp_path / "run"):
        result = cli.invoke(app, ["run", str(config), "--out", str(out), "--no-resume"])
        assert result.exit_code == 0, result.output
    assert len(RunStore(tmp_path / "run").units.finished_keys()) == 2


# -- temporary files ----------------------------------------------------------------------


def test_linking_the_same_query_again_leaves_no_temporary_link(tmp_path: Path) -> None:
    source = tmp_path / "query.wav"
    source.write_bytes(b"RIFF....")
    unit = tmp_path / "unit"
    unit.mkdir()
    (unit / ".user.wav.99.123.link").write_bytes(b"left by a killed process")
    for _ in range(2):  # a resumed unit links the same file again
        assert link_into(source, unit / "user.wav")
    assert sorted(p.name for p in unit.iterdir()) == ["user.wav"]
    assert os.path.samefile(source, unit / "user.wav")


def test_a_query_is_linked_into_a_new_unit_folder_and_replaces_an_old_file(
    tmp_path: Path,
) -> None:
    source = tmp_path / "query.wav"
    source.write_bytes(b"RIFF....")
    new, old = tmp_path / "new", tmp_path / "old"
    new.mkdir()
    old.mkdir()
    (old / "user.wav").write_bytes(b"an earlier attempt's input")
    for unit in (new, old):
        assert link_into(source, unit / "user.wav")
        assert [p.name for p in unit.iterdir()] == ["user.wav"]  # no temporary name left
        assert os.path.samefile(source, unit / "user.wav")
    assert not link_into(tmp_path / "missing.wav", new / "other.wav")  # written instead
    assert not (new / "other.wav").exists()


def tone(seconds: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32), 16000)


class SpeakingSystem:
    """An HTTP voice system that answers every request with the same short reply."""

    def __call__(self, path: str, body: Any) -> FakeResponse:
        wav = base64.b64encode(audio_to_wav_bytes(tone(0.8))).decode()
        return FakeResponse(json_body={"audio": wav, "text": "hello"})


def single_turn_run(tmp_path: Path, url: str) -> Path:
    write_audio(tone(1.0), tmp_path / "suite" / "q1.wav")
    suite = {
        "name": "one",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "Hi?", "category": "II", "audio": "q1.wav"}],
    }
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    config = {
        "suite": "suite",  # relative to this file
        "systems": [{"name": "live", "type": "http", "url": url + "/reply"}],
        "metrics": ["duration"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "concurrency": 1,
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.models
def test_resumed_single_turn_run_leaves_no_temporary_files_and_is_self_contained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer(SpeakingSystem()) as server:
        config = single_turn_run(tmp_path, server.url)
        monkeypatch.chdir(tmp_path.parent)  # paths in the config are relative to its folder
        out = tmp_path / "out"
        assert cli.invoke(app, ["run", str(config), "--out", str(out)]).exit_code == 0
        # As if the attempt had failed on voxeval's side: resume runs the unit again and links
        # the same rendered query onto the user.wav link already there.
        store = RunStore(out)
        (unit,) = store.units.records()
        store.units.finish(unit, "failed", "HarnessFault: simulated")
        result = cli.invoke(app, ["run", str(config), "--out", str(out)])  # resume: retries it
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2
    assert [u.status for u in RunStore(out).units.records()] == ["done"]
    hidden = [p for p in out.rglob(".*") if p.is_file()]
    assert hidden == []
    assert (out / "suite" / "suite" / "suite.yaml").is_file()
    summary = (out / "report" / "summary.json").read_text()

    shutil.move(tmp_path / "suite", tmp_path / "moved")
    result = cli.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert (
        json.loads((out / "report" / "summary.json").read_text())["suite"]
        == json.loads(summary)["suite"]
    )
    result = cli.invoke(app, ["score", str(out), "--metrics", "duration"])
    assert result.exit_code == 0, result.output


# -- the suite copy -----------------------------------------------------------------------


def call_suite_with_scenario_files(root: Path) -> Path:
    """A live-call suite whose scenarios are files in a folder (plus a tools file)."""
    path = write_call_suite(root, [scenario("book-1")])
    (root / "scenarios").mkdir()
    for sid in ("book-1", "book-2"):
        (root / "scenarios" / f"{sid}.yaml").write_text(yaml.safe_dump(scenario(sid)))
    data = yaml.safe_load(path.read_text())
    data["scenarios"] = "scenarios/"
    path.write_text(yaml.safe_dump(data))
    return path


def test_copy_holds_the_definition_files_with_their_layout(tmp_path: Path) -> None:
    suite = resolve_suite(str(call_suite_with_scenario_files(tmp_path / "calls")))
    assert [p.name for p in definition_files(suite)] == [
        "suite.yaml",
        "tools.yaml",
        "book-1.yaml",
        "book-2.yaml",
    ]
    copy = save_suite_copy(suite, tmp_path / "run")
    assert copy == tmp_path / "run" / "suite" / "calls" / "suite.yaml"
    assert files_under(tmp_path / "run" / "suite" / "calls") == files_under(tmp_path / "calls")
    shutil.rmtree(tmp_path / "calls")
    stored = resolve_suite(str(tmp_path / "calls" / "suite.yaml"), run_dir=tmp_path / "run")
    assert (stored.name, stored.protocol, stored.path) == ("mini-calls", "live_call", copy)
    with pytest.raises(ConfigError, match="neither a built-in suite"):
        resolve_suite(str(tmp_path / "calls" / "suite.yaml"))


def test_builtin_live_call_suite_copy_has_tools_and_every_scenario(tmp_path: Path) -> None:
    suite = resolve_suite("clinic-calls")
    copy = save_suite_copy(suite, tmp_path)
    assert (copy.parent / "tools.yaml").is_file()
    assert len(list((copy.parent / "scenarios").glob("*.yaml"))) == len(
        list((suite.path.parent / "scenarios").glob("*.yaml"))
    )


def test_live_call_report_and_score_work_after_the_suite_moved(tmp_path: Path) -> None:
    suite = call_suite_with_scenario_files(tmp_path / "calls")
    config = {
        "suite": str(suite),
        "systems": [{"name": "good", "type": "scripted"}],
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    assert cli.invoke(app, ["run", str(path), "--out", str(out)]).exit_code == 0
    summary = json.loads((out / "report" / "summary.json").read_text())
    scores = files_under(out / "items")

    shutil.move(tmp_path / "calls", tmp_path / "elsewhere")
    result = cli.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    result = cli.invoke(app, ["score", str(out), "--metrics", "task_completion"])
    assert result.exit_code == 0, result.output
    rescored = json.loads((out / "report" / "summary.json").read_text())
    good = rescored["systems"]["good"]
    assert good["task_completion"]["mean"] == 1.0 and good["task_completion"]["n"] == 2
    assert good["overall"] == summary["systems"]["good"]["overall"]
    assert files_under(out / "items").keys() == scores.keys()
