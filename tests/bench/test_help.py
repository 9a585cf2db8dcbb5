"""Bench scripts explain themselves: ``--help`` prints the docstring (what the script
measures) and the options, and exits 0 before measuring anything. The two scripts behind
the issue's targets are run here (each run imports voxeval afresh, ~2 s); the others use
the same ``bench_args.parser_for``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = {
    "concurrency.py": ("slot use", "--run-root"),
    "overhead.py": ("marginal cost of an item", "repeats"),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_help_prints_the_docstring_and_the_options(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    described, option = SCRIPTS[script]
    assert described in done.stdout
    assert option in done.stdout
    assert done.stdout.startswith("usage: ")


def test_a_wrong_option_is_refused_by_name() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "concurrency.py"), "--kind", "grpc"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--kind" in done.stderr and "grpc" in done.stderr


def test_index_commits_counts_statements_shared_by_a_batch(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "index_commits.py"), "1", "4", "--rounds", "1",
         "--run-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # five statements per unit alone (usage, model usage, old scores, scores, done); a batch
    # of four runs the same five statements once for all four
    assert "batch   1:" in lines[0] and "5.00 statements per unit" in lines[0]
    assert "batch   4:" in lines[1] and "1.25 statements per unit" in lines[1]
    assert list(tmp_path.iterdir()) == []  # the run folders are removed
