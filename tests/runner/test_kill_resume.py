"""``kill -9`` in the middle of a run loses at most the units in flight."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAIServer
from tests.runner.kill_harness import (
    FixedReplies,
    KillLoop,
    assert_index_intact,
    assert_only_in_flight_work_was_redone,
    assert_same_report,
    child_env,
    leftover_temporary_files,
    query_index,
    run_command,
    single_turn_configs,
)
from tests.runner.test_execute import log_counts
from tests.runner.toy_protocol import write_config, write_suite
from tests.simulation.helpers import scenario as call_scenario
from tests.simulation.helpers import write_suite as write_call_suite
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
            if started and len(RunStore(run_dir).units.finished_keys()) >= 4:
                break
            assert child.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    done_at_kill = RunStore(run_dir).units.finished_keys()
    assert 4 <= len(done_at_kill) < 12
    interacted_before = set(log_counts(log, "interact"))

    run_evaluation(load_run_config(config), run_dir)

    counts = log_counts(log, "interact")
    assert all(counts[key] == 1 for key in done_at_kill), "a finished unit was run again"
    redone = {key for key, n in counts.items() if n > 1}
    assert redone <= interacted_before - done_at_kill  # only units that were in flight
    assert len(redone) <= 2  # concurrency 2
    assert len(RunStore(run_dir).units.finished_keys()) == 12


# -- real protocols, killed several times at random moments ------------------------------------

SENTENCES = (
    "Boil the egg for eight minutes.",
    "The train leaves at noon.",
    "Paris is the capital of France.",
    "Drink plenty of water every day.",
    "The meeting moved to Friday.",
    "Turn left at the second light.",
    "Cats sleep most of the day.",
    "Bring an umbrella tomorrow.",
)


def spoken(text: str, out: Path) -> bytes:
    """``text`` as a WAV from espeak-ng, written to ``out`` (skip when it is missing)."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.skip("espeak-ng is needed for a reply that speech recognition can score")
    subprocess.run([espeak, "-w", str(out), text], check=True, timeout=60)
    return out.read_bytes()


@pytest.mark.models
def test_single_turn_run_killed_at_random_moments_resumes_to_the_same_report(
    tmp_path: Path,
) -> None:
    """An ``http`` system on a loopback server answers each query with its own spoken
    sentence; duration and WER (Whisper tiny) score it. Four kills, then a finished run."""
    n = len(SENTENCES)
    replies = {
        f"q{i}": (SENTENCES[i], spoken(SENTENCES[i], tmp_path / f"r{i}.wav")) for i in range(n)
    }
    system = FixedReplies(replies)
    with FakeOpenAIServer(system) as server:
        metrics = ["duration", "wer"]  # (dnsmos takes ~3 s per reply here: too slow)
        killed_cfg, reference_cfg = single_turn_configs(tmp_path, server.url, n, metrics)
        loop = KillLoop(killed_cfg, tmp_path / "killed", seed=2024, kills=4, step=(1, 2),
                        unit_spread_s=0.5, interactions=system.counts)  # fmt: skip
        points = loop.run()
        killed_interactions = system.counts()
        killed_requests = sum(killed_interactions.values())
        reference = subprocess.run(
            run_command(reference_cfg, tmp_path / "uninterrupted"),
            cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert reference.returncode == 0, reference.stderr[-3000:]
    run_dir = tmp_path / "killed"
    assert len(points) >= 3, [p.moment for p in points]
    assert any(0 < len(p.done) < n for p in points)
    assert_only_in_flight_work_was_redone(run_dir, points, killed_interactions)
    assert_index_intact(run_dir, n_units=n, n_metrics=len(metrics))
    unscored = "SELECT COUNT(*) FROM scores WHERE value IS NULL OR error IS NOT NULL"
    assert query_index(run_dir, unscored) == [(0,)]  # equal reports of real scores
    assert leftover_temporary_files(run_dir) == []
    # each item asked once, plus at most the units in flight at each kill: concurrency 2
    # talking to the system, and up to 2 more whose replies were still being scored
    assert n <= killed_requests <= n + 2 * 2 * len(points)
    summary = assert_same_report(run_dir, tmp_path / "uninterrupted")
    assert summary["units"]["done"] == n and summary["systems"]["fixed"]["units"]["failed"] == 0
    killed_usage = json.loads((run_dir / "report" / "summary.json").read_text())["usage"]
    # the system's usage counts the requests it recorded: at most what the server saw (the
    # total also counts the embedded scoring ASR's decodes)
    assert n <= killed_usage["by_provider"]["system:fixed"]["calls"] <= killed_requests


LIVE_SCENARIOS = 12


def live_call_config(tmp_path: Path, name: str) -> Path:
    # enough units that a fast machine cannot finish the run between two kills
    scenarios = [call_scenario(f"book-{i}") for i in range(LIVE_SCENARIOS)]
    suite = write_call_suite(tmp_path / "calls", scenarios)
    config = {
        "suite": str(suite),
        "systems": [
            {"name": "reference", "type": "scripted"},
            {"name": "slip", "type": "scripted", "script": "wrong"},
        ],
        "trials": 3,
        "seed": 5,
        "concurrency": 2,
        "simulation": {
            "caller": "scripted",
            "mode": "text",
            # a seeded latency model: measured compute times would differ run to run
            "latency_model": {
                "agent": {"kind": "normal", "mean_ms": 900, "sd_ms": 150},
                "tool": {"kind": "fixed", "ms": 300},
            },
        },
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_live_call_run_killed_at_random_moments_resumes_to_the_same_report(
    tmp_path: Path,
) -> None:
    """Scripted caller and scripted agents in text mode, 12 scenarios x 2 systems x 3 trials.
    The agents run in-process, so "ran again" is told by the unit's attempt count and files."""
    killed_cfg = live_call_config(tmp_path, "killed")
    loop = KillLoop(killed_cfg, tmp_path / "killed", seed=77, kills=4, unit_spread_s=0.05)
    points = loop.run()
    reference = subprocess.run(
        run_command(killed_cfg, tmp_path / "uninterrupted"),
        cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert reference.returncode == 0, reference.stderr[-3000:]
    run_dir = tmp_path / "killed"
    n_units = LIVE_SCENARIOS * 2 * 3
    n_metrics = len(query_index(run_dir, "SELECT DISTINCT metric FROM scores"))
    assert n_metrics >= 8  # task completion, turn taking and the call diagnostics
    assert len(points) >= 3, [p.moment for p in points]
    assert any(0 < len(p.done) < n_units for p in points)
    assert_only_in_flight_work_was_redone(run_dir, points)
    assert_index_intact(run_dir, n_units=n_units, n_metrics=n_metrics)
    assert leftover_temporary_files(run_dir) == []
    summary = assert_same_report(run_dir, tmp_path / "uninterrupted")
    assert summary["systems"]["reference"]["task_completion"]["mean"] == 1.0
    assert summary["systems"]["slip"]["task_completion"]["mean"] == 0.0
