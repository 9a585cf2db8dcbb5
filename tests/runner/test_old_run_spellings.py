"""A run written by voxeval 0.1 keeps that version's system spellings in its run.yaml
(``type: agent`` + ``agent: NAME``, ``type: openai_audio``). New configs with them are
refused (tests/systems/test_legacy_spellings.py), but such a run still re-scores."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.test_python_api import write_config
from voxeval import load_config, rescore, run_evaluation
from voxeval.config import SystemSpec
from voxeval.systems.factory import current_spelling


def test_the_old_spellings_read_as_the_current_ones() -> None:
    agent = current_spelling(SystemSpec(name="a", type="agent", agent="scripted", script="wrong"))
    assert (agent.type, agent.options()) == ("scripted", {"script": "wrong"})
    audio = current_spelling(SystemSpec(name="b", type="openai_audio"))
    assert audio.type == "openai-audio"
    current = SystemSpec(name="c", type="scripted")
    assert current_spelling(current) is current


def test_a_run_written_with_an_old_spelling_re_scores(tmp_path: Path) -> None:
    result = run_evaluation(load_config(write_config(tmp_path), {"trials": 1}), tmp_path / "run")
    run_yaml = result.run_dir / "run.yaml"
    data = yaml.safe_load(run_yaml.read_text(encoding="utf-8"))
    data["config"]["systems"][0] = {"name": "good", "type": "agent", "agent": "scripted"}
    run_yaml.write_text(yaml.safe_dump(data), encoding="utf-8")
    rescored = rescore(result.run_dir, ["task_completion"])
    assert rescored.overall("good")["task_completion"]["mean"] == 1.0
    assert rescored.overall("wrong")["task_completion"]["mean"] == 0.0
