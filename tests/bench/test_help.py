"""Every bench script with options explains itself: ``--help`` prints its docstring (what it
measures) and its options, and exits 0 before measuring anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = {
    "concurrency.py": ("slot use", "--run-root"),
    "overhead.py": ("marginal cost of an item", "repeats"),
    "cascade_call.py": ("simulated seconds per wall second", "target_simulated_s"),
    "parallel_latency.py": ("parallel calls", "--parallel-first"),
    "unit_costs.py": ("CPU seconds and wall seconds", "--quick"),
    "viewer.py": ("voxeval view", "units"),
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
