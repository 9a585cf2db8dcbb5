"""``kill -9`` in the middle of a run loses at most the units in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.runner.test_execute import log_counts
from tests.runner.toy_protocol import write_config, write_suite
from voxeval.config import load_run_config
from voxeval.runner import run_evaluation
from voxeval.store import RunStore

REPO = Path(__file__).resolve().parents[2]
CHILD = (
    "import sys, tests.runner.toy_protocol\n"
    "from voxeval.cli.main import app\n"
    "sys.argv = ['voxeval', 'run', sys.argv[1], '--out', sys.argv[2], '--concurrency', '2']\n"
    "app()\n"
)


def test_kill_9_then_resume(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=12, log=str(log), sleep=0.15)
    config = write_config(tmp_path / "cfg.yaml", suite)
    run_dir = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(config), str(run_dir)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = (run_dir / "run.yaml").exists() and "config:" in (
                run_dir / "run.yaml"
            ).read_text()
            if started and len(RunStore(run_dir).finished_keys()) >= 4:
                break
            assert child.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    done_at_kill = RunStore(run_dir).finished_keys()
    assert 4 <= len(done_at_kill) < 12
    interacted_before = set(log_counts(log, "interact"))

    run_evaluation(load_run_config(config), run_dir)

    counts = log_counts(log, "interact")
    assert all(counts[key] == 1 for key in done_at_kill), "a finished unit was run again"
    redone = {key for key, n in counts.items() if n > 1}
    assert redone <= interacted_before - done_at_kill  # only units that were in flight
    assert len(redone) <= 2  # concurrency 2
    assert len(RunStore(run_dir).finished_keys()) == 12
