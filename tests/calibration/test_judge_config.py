"""Judge config files: a bare spec or a `judge:` / `audio_judge:` key; errors name the file
and the field; a model that must never judge is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from voxeval.calibration.judge_config import build_judge, load_judge_spec
from voxeval.errors import ConfigError


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_bare_spec_and_a_run_config_key(tmp_path: Path) -> None:
    spec = {"provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}
    assert load_judge_spec(write(tmp_path, spec), "judge").options()["model"] == "m"
    run = {"suite": "clinic-calls", "judge": spec, "audio_judge": {**spec, "model": "a"}}
    path = write(tmp_path, run)
    assert load_judge_spec(path, "judge").options()["model"] == "m"
    assert load_judge_spec(path, "audio_judge").options()["model"] == "a"
    judge = build_judge(path, "audio_judge")
    assert judge.modality == "audio"
    assert build_judge(path, "judge").modality == "text"


def test_errors_name_the_file_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, {"suite": "clinic-calls"})
    with pytest.raises(ConfigError, match=rf"{path}: audio_judge: missing"):
        load_judge_spec(path, "audio_judge")
    path = write(tmp_path, {"judge": "gpt"})
    with pytest.raises(ConfigError, match=rf"{path}: judge: expected a provider spec"):
        load_judge_spec(path, "judge")
    path = write(tmp_path, {"judge": {"model": "m"}})
    with pytest.raises(ConfigError, match=rf"{path}: judge: provider: Field required"):
        load_judge_spec(path, "judge")
    with pytest.raises(ConfigError, match="no such judge config file"):
        load_judge_spec(tmp_path / "absent.yaml", "judge")


def test_the_tiny_test_model_is_refused_as_a_judge(tmp_path: Path) -> None:
    path = write(tmp_path, {"judge": {"provider": "smollm2"}})
    with pytest.raises(ConfigError, match="refused as a judge"):
        build_judge(path, "judge")
