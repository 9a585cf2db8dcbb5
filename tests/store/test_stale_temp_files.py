"""Temporary files of writers killed mid-write are removed when a run is resumed; nothing
else is: not a live writer's file, not a file whose name only looks similar."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from voxeval import atomic_files
from voxeval.store.run_store import RunStore


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"partial")
    return path


def test_only_dead_writers_temporary_files_are_stale(tmp_path: Path) -> None:
    gone, alive, tid = dead_pid(), os.getpid(), threading.get_ident()
    unit = tmp_path / "items" / "q1" / "sys" / "0"
    stale = [
        touch(unit / f".scores.json.{gone}.{tid}.tmp"),
        touch(unit / f".user.wav.{gone}.{tid}.link"),
        touch(tmp_path / "report" / f".summary.json.{gone}.7.tmp"),
        touch(tmp_path / f".suite.{gone}.tmp" / "suite" / "suite.yaml"),
    ]
    kept = [
        touch(unit / f".reply.json.{alive}.{tid}.tmp"),  # a live writer's (this process)
        touch(unit / "scores.json"),
        touch(unit / f".notes.{gone}.tmp"),  # not our pattern: no thread id
        touch(unit / f".scores.json.{gone}.{tid}.bak"),
        touch(unit / f".scores.json.0.{tid}.tmp"),  # pid 0 is nobody's
        touch(unit / f".big.99999999999.{tid}.tmp"),  # not a pid
        touch(unit / f".suite.{gone}.tmp"),  # a staging *folder* name, but a file deep down
        touch(tmp_path / "items" / f".suite.{gone}.tmp" / "x"),  # staging only at the top
    ]
    assert atomic_files.stale_temp_paths(tmp_path) == sorted(
        [*stale[:3], tmp_path / f".suite.{gone}.tmp"]
    )
    removed = RunStore(tmp_path).folder.remove_stale_temp_files()
    assert len(removed) == 4
    assert not any(p.exists() for p in stale)
    assert not (tmp_path / f".suite.{gone}.tmp").exists()
    assert all(p.exists() for p in kept)


def test_write_bytes_atomic_names_its_temporary_file_as_the_cleanup_expects(
    tmp_path: Path,
) -> None:
    target = tmp_path / "scores.json"
    tmp = atomic_files.temp_path(target)
    assert tmp.parent == tmp_path and tmp.name.startswith(".scores.json.")
    touch(tmp)
    assert atomic_files.stale_temp_paths(tmp_path) == []  # this process is alive
    gone = dead_pid()
    orphan = touch(tmp.with_name(tmp.name.replace(f".{os.getpid()}.", f".{gone}.", 1)))
    assert atomic_files.stale_temp_paths(tmp_path) == [orphan]
    atomic_files.write_bytes_atomic(target, b"{}")
    assert target.read_bytes() == b"{}" and not tmp.exists()
