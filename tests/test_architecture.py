"""The layers of docs/architecture.md hold: imports point down, no module imports itself back,
and a planted upward import or cycle makes the checks fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BIN = Path(sys.executable).parent


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "layers"]
    # "a | b" puts independent packages on one layer
    return [name.strip() for layer in contract["layers"] for name in layer.split("|")]


def _lint_imports(src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(BIN / "lint-imports"), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _cycles(src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    return subprocess.run(
        [sys.executable, "-m", "tests.import_cycles", "voxeval"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _copy_source(tmp_path: Path) -> Path:
    copy = tmp_path / "src"
    shutil.copytree(SRC / "voxeval", copy / "voxeval", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_every_top_level_module_has_a_layer() -> None:
    top = {
        f"voxeval.{p.stem}" if p.is_file() else f"voxeval.{p.name}"
        for p in (SRC / "voxeval").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert top == set(_layers())


def test_layers_point_down() -> None:
    result = _lint_imports(SRC)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_no_import_cycles_between_modules() -> None:
    result = _cycles(SRC)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


@pytest.mark.slow
def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    copy = _copy_source(tmp_path)
    planted = copy / "voxeval" / "audio" / "trim.py"
    planted.write_text(planted.read_text() + "\nfrom voxeval.report import writer  # planted\n")
    result = _lint_imports(copy)
    assert result.returncode == 1
    assert "voxeval.audio.trim -> voxeval.report.writer" in result.stdout


@pytest.mark.slow
def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    copy = _copy_source(tmp_path)
    # a type-only import counts: it is how most cycles used to hide
    planted = copy / "voxeval" / "audio" / "value.py"  # mix imports value
    planted.write_text(
        planted.read_text()
        + "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        + "    from voxeval.audio import mix  # planted\n"
    )
    result = _cycles(copy)
    assert result.returncode == 1
    assert "voxeval.audio.mix" in result.stdout
    assert "voxeval.audio.value" in result.stdout
