"""``kill -9`` at the exact moments a random kill rarely hits: between writing a temporary
file and renaming it, and inside the index transaction that commits a unit's scores (after
its artifacts and scores.json were written). The resumed run cleans up, redoes just that unit
and reports what an uninterrupted run reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tests.runner.toy_protocol  # noqa: F401  (registers the toy protocol)
from tests.fakes.openai_server import FakeOpenAIServer
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
    split_unit_key,
    unit_folder,
)
from tests.runner.toy_protocol import write_config, write_suite
from voxeval.audio import audio_to_wav_bytes
from voxeval.config import load_run_config
from voxeval.runner import run_evaluation
from voxeval.store import RunStore

N_QUERIES = 4
KILLED_UNIT = 3  # the third unit to commit (not always the third planned: see below)

# `voxeval run` that SIGKILLs itself at a chosen point of the KILLED_UNIT-th unit's commit.
CHILD = """
import os, signal, sys
from pathlib import Path
from voxeval.store import group_commit, layout

config, out, point, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
seen = [0]

def reached():
    seen[0] += 1
    if seen[0] == nth:
        os.kill(os.getpid(), signal.SIGKILL)

if point == "rename":  # scores.json written to its temporary name, not yet renamed
    real_replace = os.replace
    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == layout.SCORES_FILE and str(src).endswith(".tmp"):
            reached()
        return real_replace(src, dst, *args, **kwargs)
    os.replace = replace
elif point == "commit":  # score rows inserted and the unit's end run, nothing committed
    from voxeval.store.unit_statements import INSERT_SCORES
    real_run = group_commit.run_writes
    def run_writes(conn, writes):
        real_run(conn, writes)
        if any(getattr(w, "statement", None) is INSERT_SCORES for w in writes):
            reached()
    group_commit.run_writes = run_writes

from voxeval.cli.main import app
sys.argv = ["voxeval", "run", config, "--out", out]
app()
"""


def run_killed_at(config: Path, out: Path, point: str) -> int:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(config), str(out), point, str(KILLED_UNIT)],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return child.returncode


def left_scores(unit_dir: Path, point: str) -> bool:
    """Whether a kill at ``point`` left this unit's scores.json: under its temporary name
    ("rename") or in place, not yet committed to the index ("commit")."""
    if point == "rename":
        return any(unit_dir.glob(".scores.json.*.tmp"))
    return (unit_dir / "scores.json").is_file()


def unit_keys(run_dir: Path) -> list[str]:
    return [str(r[0]) for r in query_index(run_dir, "SELECT unit_key FROM units ORDER BY seq")]


@pytest.mark.models
@pytest.mark.parametrize("point", ["rename", "commit"])
def test_unit_killed_while_committing_is_redone_cleanly(tmp_path: Path, point: str) -> None:
    wav = audio_to_wav_bytes(query_tone(9))
    system = FixedReplies({f"q{i}": (f"reply {i}", wav) for i in range(N_QUERIES)})
    with FakeOpenAIServer(system) as server:
        killed_cfg, reference_cfg = single_turn_configs(
            tmp_path, server.url, N_QUERIES, ["duration"], concurrency=1, shared_cache=True
        )
        run_dir = tmp_path / "killed"
        assert run_killed_at(killed_cfg, run_dir, point) == -9

        keys = unit_keys(run_dir)
        # what the kill left: two units committed, the victim's commit lost whole. Even at
        # concurrency 1 units may commit out of plan order (the next unit calls the system
        # while the previous one stores its reply), so the victim is found by what it left:
        # its scores.json, under the temporary name or renamed, while still running.
        assert query_index(run_dir, "PRAGMA integrity_check") == [("ok",)]
        statuses = dict(query_index(run_dir, "SELECT unit_key, status FROM units"))
        assert list(statuses.values()).count("done") == KILLED_UNIT - 1
        running = {k for k, status in statuses.items() if status == "running"}
        unfinished = {k for k, status in statuses.items() if status != "done"}
        scores_left = {k for k in unfinished if left_scores(unit_folder(run_dir, k), point)}
        assert len(scores_left) == 1, statuses
        (victim,) = scores_left
        # its interaction was marked (with what it cost) before it was scored: resume scores
        # its stored reply and never asks its system again
        assert statuses[victim] == "interacted"
        victim_dir = unit_folder(run_dir, victim)
        done_dir = unit_folder(run_dir, next(k for k in keys if statuses[k] == "done"))
        assert query_index(run_dir, f"SELECT COUNT(*) FROM scores WHERE unit_key = '{victim}'") == [
            (0,)
        ]
        assert (victim_dir / "reply.json").is_file()  # artifacts written, scores not committed
        # another unit may be talking to the system while the victim is scored: such a unit
        # is running, redone
        asked_before_resume = system.counts()

        resumed = subprocess.run(
            run_command(killed_cfg, run_dir),
            cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        reference = subprocess.run(
            run_command(reference_cfg, tmp_path / "uninterrupted"),
            cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert reference.returncode == 0, reference.stderr[-3000:]
        asked = system.counts()

    attempts = dict(query_index(run_dir, "SELECT unit_key, attempts FROM units"))
    # only the unit talking to its system at the kill ran twice (killed, then resumed): at
    # most one at concurrency 1; the victim was scored again, not asked again
    assert len(running) <= 1 and victim not in running
    assert attempts == {key: 2 if key in running else 1 for key in keys}
    status_of_item = {split_unit_key(run_dir, key)[0]: statuses[key] for key in keys}
    assert len(asked) == N_QUERIES
    for item, count in asked.items():
        before = asked_before_resume.get(item, 0)
        assert before <= 1
        # each item once more in the uninterrupted run; a unit done before the kill was asked
        # once; one never started (it may have been waiting for its start to be committed)
        # was asked only by the resumed run; one running at the kill was asked again by the
        # resumed run, and by the killed run unless the kill came before its request left
        # (the server may count a request from the dead process late, hence the range)
        if status_of_item[item] in ("done", "interacted"):
            assert count == 2, item
        elif status_of_item[item] == "running":
            assert count - 2 in {0, 1} and count - 2 >= before, item
        else:
            assert before == 0 and count == 2, item
    assert asked_before_resume.get(split_unit_key(run_dir, victim)[0]) == 1

    assert_index_intact(run_dir, n_units=N_QUERIES, n_metrics=1)
    # the system's usage: one call per unit, the victim's committed with its mark by the
    # killed run (nothing lost) and not again by the resumed one (nothing counted twice); a
    # call cut short by the kill never reached the index
    usage = json.loads((run_dir / "report" / "summary.json").read_text())["usage"]
    assert usage["by_provider"]["system:fixed"]["calls"] == N_QUERIES
    assert leftover_temporary_files(run_dir) == []
    # the redone unit's folder holds exactly the new attempt's files, scores as committed
    assert sorted(p.name for p in victim_dir.iterdir()) == sorted(
        p.name for p in done_dir.iterdir()
    )
    stored = json.loads((victim_dir / "scores.json").read_text())
    (value,) = query_index(
        run_dir, f"SELECT value FROM scores WHERE unit_key = '{victim}' AND metric = 'duration'"
    )
    assert stored["duration"]["value"] == pytest.approx(value[0])
    assert_same_report(run_dir, tmp_path / "uninterrupted")


def test_resume_removes_what_a_failed_attempt_left_in_the_unit_folder(tmp_path: Path) -> None:
    """A unit that failed (error.txt written) and succeeds on resume keeps no trace of the
    failure in its folder: the folder is what an uninterrupted run would have written."""
    log = tmp_path / "log.txt"
    suite = write_suite(tmp_path / "suite", n_items=3, log=str(log), fail_items=["q01"])
    config = load_run_config(write_config(tmp_path / "cfg.yaml", suite))
    run_dir = tmp_path / "run"
    run_evaluation(config, run_dir)
    store = RunStore(run_dir)
    (failed,) = store.units.records(status="failed")
    failed_dir = store.folder.unit_dir(failed)
    assert (failed_dir / "error.txt").is_file()
    (failed_dir / "notes-of-the-failed-attempt.json").write_text("{}")

    Path(f"{log}.heal").touch()
    run_evaluation(config, run_dir)
    assert {u.status for u in RunStore(run_dir).units.records()} == {"done"}
    healthy_dir = store.folder.unit_dir(store.units.records()[0])
    assert sorted(p.name for p in failed_dir.iterdir()) == sorted(
        p.name for p in healthy_dir.iterdir()
    )
    assert not (failed_dir / "error.txt").exists()
