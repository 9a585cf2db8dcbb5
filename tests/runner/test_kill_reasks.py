"""``kill -9`` while replies wait to be scored re-asks at most ``concurrency`` systems per
kill, and the usage of the resumed run counts every request the servers received once.

Scoring is made slower than the system (the child sleeps in the protocol's ``score``), so at
each kill several units hold a stored reply that is not committed yet: they are scored again
from their folders. Only the units talking to their system at the kill may ask it again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.kill_harness import (
    REPO,
    FixedReplies,
    assert_index_intact,
    assert_same_report,
    child_env,
    leftover_temporary_files,
    query_index,
    query_tone,
    run_command,
    single_turn_configs,
)
from voxeval.audio import audio_to_wav_bytes

N_QUERIES = 8
KILLS = 2
STUCK = "q6"  # its first request is answered only after the second kill

# `voxeval run` whose scoring takes 0.3 s a unit and that SIGKILLs itself in the transaction
# of its second batch of committed scores (when several later replies are waiting).
CHILD = """
import os, signal, sys, time
from voxeval.protocols.single_turn import SingleTurnProtocol
from voxeval.store import group_commit
from voxeval.store.unit_statements import INSERT_SCORES

real_score = SingleTurnProtocol.score
def slow_score(self, unit, ctx, metrics):
    time.sleep(0.3)
    return real_score(self, unit, ctx, metrics)
SingleTurnProtocol.score = slow_score

config, out, kill = sys.argv[1], sys.argv[2], sys.argv[3] == "kill"
seen = [0]
real_run = group_commit.run_writes
def run_writes(conn, writes):
    real_run(conn, writes)
    if kill and any(getattr(w, "statement", None) is INSERT_SCORES for w in writes):
        seen[0] += 1
        if seen[0] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
group_commit.run_writes = run_writes

from voxeval.cli.main import app
sys.argv = ["voxeval", "run", config, "--out", out]
app()
"""


def child_command(config: Path, out: Path, kill: bool) -> list[str]:
    return [sys.executable, "-c", CHILD, str(config), str(out), "kill" if kill else "finish"]


def run_child(config: Path, out: Path, kill: bool) -> int:
    child = subprocess.run(
        child_command(config, out, kill),
        cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert child.returncode in (0, -9), child.stderr[-3000:]
    return child.returncode


def statuses(run_dir: Path) -> dict[str, str]:
    return {str(k): str(s) for k, s in query_index(run_dir, "SELECT unit_key, status FROM units")}


class StuckOnce(FixedReplies):
    """Answers at once, except ``STUCK``'s first request: held until ``released`` is set
    (the test kills the run meanwhile: that request was received and never answered)."""

    def __init__(self, replies: dict[str, tuple[str, bytes]]) -> None:
        super().__init__(replies)
        self.stuck = threading.Event()
        self.released = threading.Event()

    def __call__(self, path: str, body: Any) -> FakeResponse:
        response = super().__call__(path, body)
        if STUCK.encode() + b"__" in body and not self.stuck.is_set():
            self.stuck.set()
            self.released.wait(120)
        return response


@pytest.mark.slow
def test_kill_9_reasks_at_most_concurrency_units_and_counts_usage_exactly(
    tmp_path: Path,
) -> None:
    wav = audio_to_wav_bytes(query_tone(3))
    system = StuckOnce({f"q{i}": (f"reply {i}", wav) for i in range(N_QUERIES)})
    with FakeOpenAIServer(system) as server:
        killed_cfg, reference_cfg = single_turn_configs(
            tmp_path, server.url, N_QUERIES, ["duration"], concurrency=2, shared_cache=True
        )
        run_dir = tmp_path / "killed"
        # kill 1: at its second commit of scores, while later replies wait to be scored
        assert run_child(killed_cfg, run_dir, kill=True) == -9
        waiting_at_kill = [u for u, s in statuses(run_dir).items() if s == "interacted"]
        # kill 2: while STUCK's request is at the server (killed from outside)
        child = subprocess.Popen(
            child_command(killed_cfg, run_dir, kill=False), cwd=REPO, env=child_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            assert system.stuck.wait(120), "the run never asked about " + STUCK
            child.send_signal(signal.SIGKILL)
            assert child.wait(30) == -9
        finally:
            if child.poll() is None:
                child.kill()
            system.released.set()
        stuck_status = {k.split("__")[0]: s for k, s in statuses(run_dir).items()}[STUCK]
        assert run_child(killed_cfg, run_dir, kill=False) == 0
        asked = system.counts()
        reference = subprocess.run(
            run_command(reference_cfg, tmp_path / "uninterrupted"),
            cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert reference.returncode == 0, reference.stderr[-3000:]

    # the first kill left replies waiting to be scored (more units past their system call
    # than concurrency): the case that re-asked up to five systems per kill before
    assert len(waiting_at_kill) >= 1, waiting_at_kill
    assert stuck_status == "running"
    assert len(asked) == N_QUERIES
    reasked = {item for item, n in asked.items() if n > 1}
    assert len(reasked) <= 2 * KILLS, asked  # concurrency 2
    assert asked[next(k for k in asked if k.startswith(STUCK + "__"))] == 2
    assert_index_intact(run_dir, n_units=N_QUERIES, n_metrics=1)
    assert leftover_temporary_files(run_dir) == []
    assert not list(run_dir.rglob("sent_requests.log"))
    assert_same_report(run_dir, tmp_path / "uninterrupted")

    # usage: one call per unit (a reused reply's call committed with its mark by the killed
    # run, never counted again), and every request the server received, the one of the
    # killed call included (as a request of 0 calls); a request counted as it left may have
    # been cut off by a kill before the server read it
    usage = json.loads((run_dir / "report" / "summary.json").read_text())["usage"]
    system_usage = usage["by_provider"]["system:fixed"]
    assert system_usage["calls"] == N_QUERIES
    received = sum(asked.values())
    assert received <= system_usage["requests"] <= received + 2 * KILLS
    lost = query_index(
        run_dir,
        "SELECT unit_key, requests FROM usage WHERE provider = 'system:fixed' AND calls = 0",
    )
    assert [(key.split("__")[0], n) for key, n in lost if key.startswith(STUCK)] == [(STUCK, 1)]
