"""The curated Python API: ``from voxeval import load_config, run_evaluation, ...`` runs an
evaluation as ``voxeval run`` does (here: two scripted agents in simulated text-mode calls),
validates a config and re-scores a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import voxeval
from tests.simulation.helpers import scenario, write_suite
from voxeval import ConfigError, load_config, rescore, run_evaluation, validate


def write_config(tmp_path: Path) -> Path:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    config = {
        "suite": str(suite),
        "systems": [
            {"name": "good", "type": "scripted"},
            {"name": "wrong", "type": "scripted", "script": "wrong"},
        ],
        "trials": 2,
        "seed": 3,
        "simulation": {"caller": "scripted", "mode": "text"},
        "metrics": ["task_completion", "turn_taking"],
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_run_an_evaluation_from_python(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path), {"trials": 1})
    assert config.trials == 1
    suite = validate(config)
    assert suite is not None and (suite.name, suite.protocol) == ("mini-calls", "live_call")
    result = run_evaluation(config, tmp_path / "run")
    assert result.run_dir == tmp_path / "run" and result.complete
    assert result.overall("good")["task_completion"]["mean"] == 1.0
    assert result.overall("wrong")["task_completion"]["mean"] == 0.0
    assert result.overall("good")["task_completion"]["n"] == 1
    assert result.summary["seed"] == 3
    # a mapping is a config too; the same seed gives the same scores
    again = run_evaluation(config.model_dump(mode="json"), tmp_path / "again")
    assert again.overall("wrong") == result.overall("wrong")
    rescored = rescore(result.run_dir, ["task_completion"])
    assert rescored.overall("good")["task_completion"]["mean"] == 1.0


def test_a_bad_config_is_refused_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="trials"):
        run_evaluation({"suite": "x", "systems": [], "trials": 0}, tmp_path / "run")


def test_import_voxeval_stays_light() -> None:
    code = "import sys, voxeval; print('voxeval.runner' in sys.modules, voxeval.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", voxeval.__version__]
    assert set(voxeval.__all__) >= {"run_evaluation", "load_config", "rescore", "validate"}
