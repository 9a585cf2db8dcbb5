"""Kill ``voxeval run`` with SIGKILL at seeded random moments, resume, repeat; then check that
the killed run lost only in-flight work and reports what an uninterrupted run reports.

Used by ``tests/runner/test_kill_resume.py``. The run is a real subprocess (``python -m
voxeval run``); the parent reads the index with plain ``sqlite3`` (never through voxeval, so
it opens nothing the child could see) to decide when to kill.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tests.fakes.openai_server import FakeResponse
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, write_audio
from voxeval.store.layout import unit_relpath

REPO = Path(__file__).resolve().parents[2]

# summary.json fields that differ between two runs for reasons other than their results:
# the run's own id (folder name + random suffix) and the time the report was written.
# Nothing in the single-turn or live-call summary is a measured timing (latencies of live
# calls are simulated from the seeded latency model); usage is compared on its own (see
# ``assert_same_report``).
RUN_IDENTITY_FIELDS = ("run_id", "generated_at")


def child_env() -> dict[str, str]:
    """The test's environment with this worktree's code first on the path."""
    env = dict(os.environ)
    paths = [str(REPO / "src"), str(REPO), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def run_command(config: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "voxeval", "run", str(config), "--out", str(out)]


def query_index(run_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the run's index ([] while it or its tables do not exist yet)."""
    path = run_dir / "index.sqlite"
    if not path.exists():
        return []
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        conn.close()


def unit_attempts(run_dir: Path) -> dict[str, tuple[str, int]]:
    """``{unit_key: (status, attempts)}`` of every unit in the index."""
    rows = query_index(run_dir, "SELECT unit_key, status, attempts FROM units")
    return {key: (status, int(attempts)) for key, status, attempts in rows}


def done_count(run_dir: Path) -> int:
    rows = query_index(run_dir, "SELECT COUNT(*) FROM units WHERE status = 'done'")
    return int(rows[0][0]) if rows else 0


def unit_folder(run_dir: Path, key: str) -> Path:
    """The unit folder of ``key`` (its relative path is recorded nowhere else: rebuild it)."""
    item_id, system, trial, condition = split_unit_key(run_dir, key)
    return run_dir / unit_relpath(item_id, system, trial, condition)


def split_unit_key(run_dir: Path, key: str) -> tuple[str, str, int, str]:
    rows = query_index(
        run_dir,
        "SELECT item_id, system, trial, condition FROM units WHERE unit_key = "
        + "'"
        + key.replace("'", "''")
        + "'",
    )
    (row,) = rows
    return str(row[0]), str(row[1]), int(row[2]), str(row[3])


def file_identities(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file of a unit folder with its inode, modification time and bytes: a unit that
    ran again would replace them (atomic writes make new inodes)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            out[str(path.relative_to(folder))] = (stat.st_ino, stat.st_mtime_ns, path.read_bytes())
    return out


@dataclass
class KillPoint:
    """What a kill left behind: the units already done (with their attempt counts), their
    files, and the interactions a loopback server had seen per item (when it counts)."""

    moment: str
    done: dict[str, int]
    files: dict[str, dict[str, tuple[int, int, bytes]]]
    interactions: dict[str, int] = field(default_factory=dict)


@dataclass
class KillLoop:
    """``kills`` SIGKILLs at seeded random moments, each followed by a resume, then one run
    that is let finish. ``interactions`` returns the loopback server's counts per item."""

    config: Path
    run_dir: Path
    seed: int
    kills: int = 4
    unit_spread_s: float = 0.5  # kill up to this long after a unit was seen finishing
    step: tuple[int, int] = (1, 3)  # units to wait for between kills (drawn in this range)
    startup_s: tuple[float, float] = (0.3, 2.5)  # the first kill: this long after the start
    interactions: Callable[[], dict[str, int]] = dict
    timeout_s: float = 120.0
    points: list[KillPoint] = field(default_factory=list)

    def run(self) -> list[KillPoint]:
        rng = random.Random(self.seed)
        for number in range(self.kills):
            child = subprocess.Popen(
                run_command(self.config, self.run_dir),
                cwd=REPO,
                env=child_env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                moment = self._wait_for_moment(child, rng, first=number == 0)
                if child.poll() is not None:
                    break  # the run finished before this kill's moment came
                os.kill(child.pid, signal.SIGKILL)
                child.wait(timeout=30)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=30)
            self.points.append(self._snapshot(moment))
        final = subprocess.run(
            run_command(self.config, self.run_dir),
            cwd=REPO,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=self.timeout_s,
        )
        assert final.returncode == 0, final.stderr[-3000:]
        return self.points

    def _wait_for_moment(
        self, child: subprocess.Popen[bytes], rng: random.Random, first: bool
    ) -> str:
        if first:  # anywhere in start-up: imports, provenance, suite copy, plan, first units
            delay = rng.uniform(*self.startup_s)
            self._sleep_while_alive(child, delay)
            return f"{delay:.2f} s after the start"
        before = done_count(self.run_dir)
        target = before + rng.randint(*self.step)
        delay = rng.uniform(0.0, self.unit_spread_s)
        deadline = time.monotonic() + self.timeout_s
        while done_count(self.run_dir) < target and child.poll() is None:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.01)
        self._sleep_while_alive(child, delay)
        return f"{delay:.2f} s after {target} units were done"

    @staticmethod
    def _sleep_while_alive(child: subprocess.Popen[bytes], seconds: float) -> None:
        end = time.monotonic() + seconds
        while child.poll() is None and time.monotonic() < end:
            time.sleep(min(0.01, max(0.0, end - time.monotonic())))

    def _snapshot(self, moment: str) -> KillPoint:
        units = unit_attempts(self.run_dir)
        done = {key: attempts for key, (status, attempts) in units.items() if status == "done"}
        files = {key: file_identities(unit_folder(self.run_dir, key)) for key in done}
        return KillPoint(moment, done, files, dict(self.interactions()))


def assert_only_in_flight_work_was_redone(
    run_dir: Path, points: list[KillPoint], interactions: dict[str, int] | None = None
) -> None:
    """A unit done at a kill never ran again: same attempt count, same files (inode, time,
    bytes) and, given the loopback server's final ``interactions`` per item, no further
    request for an item whose units were all done."""
    final = unit_attempts(run_dir)
    final_files = {key: file_identities(unit_folder(run_dir, key)) for key in final}
    for point in points:
        for key, attempts in point.done.items():
            assert final[key] == ("done", attempts), f"{key} ran again after {point.moment}"
            assert final_files[key] == point.files[key], f"{key} rewritten after {point.moment}"
    if interactions is None:
        return
    for point in points:
        for item, seen in point.interactions.items():
            if all(key in point.done for key in keys_of_item(run_dir, item)):
                assert interactions[item] == seen, f"{item} asked again after {point.moment}"


def keys_of_item(run_dir: Path, item_id: str) -> list[str]:
    rows = query_index(
        run_dir,
        "SELECT unit_key FROM units WHERE item_id = '" + item_id.replace("'", "''") + "'",
    )
    return [str(r[0]) for r in rows]


def assert_index_intact(run_dir: Path, n_units: int, n_metrics: int) -> None:
    """SQLite says the file is sound; one row per unit, per item, per (unit, metric)."""
    assert query_index(run_dir, "PRAGMA integrity_check") == [("ok",)]
    duplicates = query_index(
        run_dir,
        "SELECT unit_key FROM units GROUP BY run_id, unit_key HAVING COUNT(*) > 1 "
        "UNION ALL SELECT unit_key FROM scores GROUP BY run_id, unit_key, metric "
        "HAVING COUNT(*) > 1 "
        "UNION ALL SELECT item_id FROM items GROUP BY run_id, item_id HAVING COUNT(*) > 1",
    )
    assert duplicates == []
    assert query_index(run_dir, "SELECT DISTINCT run_id FROM units") == query_index(
        run_dir, "SELECT DISTINCT run_id FROM scores"
    )
    statuses = query_index(run_dir, "SELECT status, COUNT(*) FROM units GROUP BY status")
    assert statuses == [("done", n_units)]
    assert query_index(run_dir, "SELECT COUNT(*) FROM scores") == [(n_units * n_metrics,)]


def leftover_temporary_files(run_dir: Path) -> list[str]:
    """Hidden files or folders anywhere in the run folder: voxeval's temporary names
    (``.<name>.<pid>.<thread>.tmp``, ``.<name>.<pid>.<thread>.link``, ``.suite.<pid>.tmp``)
    all start with a dot, and a finished run has none."""
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob(".*"))


def report_without_run_identity(run_dir: Path) -> tuple[dict[str, Any], str]:
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    for name in RUN_IDENTITY_FIELDS:
        assert name in summary, f"summary.json has no {name!r}: update RUN_IDENTITY_FIELDS"
        del summary[name]
    return summary, (run_dir / "report" / "scores.csv").read_text()


def usage_calls(summary: dict[str, Any]) -> dict[str, int]:
    """Calls per system from summary.json's usage section (and each system's copy of it)."""
    return {system: int(entry["calls"]) for system, entry in summary["usage"]["by_system"].items()}


def assert_same_report(killed: Path, uninterrupted: Path) -> dict[str, Any]:
    """The killed run's summary.json and scores.csv equal the uninterrupted run's, apart from
    the run identity and usage. Usage counts calls really made: a unit killed after its
    system answered asked again on resume, so its calls can only be more than the
    uninterrupted run's; they are compared, then removed. Returns the killed run's summary."""
    summary, csv_text = report_without_run_identity(killed)
    reference, reference_csv = report_without_run_identity(uninterrupted)
    assert csv_text == reference_csv
    killed_calls, reference_calls = usage_calls(summary), usage_calls(reference)
    assert killed_calls.keys() == reference_calls.keys()
    assert all(killed_calls[s] >= reference_calls[s] for s in killed_calls)
    strip_usage(summary)
    strip_usage(reference)
    assert summary == reference, _differences(summary, reference)
    return summary


def _differences(a: Any, b: Any, path: str = "summary") -> list[str]:
    """Where two JSON documents differ (the first few paths), for the assertion message."""
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                found += _differences(a.get(key), b.get(key), f"{path}.{key}")
        return found[:10]
    return [f"{path}: {a!r} != {b!r}"[:300]]


def strip_usage(summary: dict[str, Any]) -> None:
    """Drop what legitimately differs between a killed-and-resumed run and an uninterrupted
    one: usage and its costs (a killed unit's requests were sent twice) and latency (measured
    wall times)."""
    summary.pop("usage")
    summary.pop("costs", None)
    for system in summary["systems"]:
        for view in (summary["systems"][system], summary.get(system)):
            if isinstance(view, dict):
                view.pop("usage", None)
                view.pop("latency", None)
                distributions = view.get("distributions")
                if isinstance(distributions, dict):  # histograms of the same wall times
                    for part in [k for k in distributions if "latency" in k]:
                        distributions.pop(part)
                    if not distributions:
                        view.pop("distributions")


# -- a single-turn run against a loopback HTTP system --------------------------------------

ITEM_ID = re.compile(rb'name="item_id"\r\n\r\n([^\r]*)\r\n')


class FixedReplies:
    """An HTTP voice system answering each item with its own fixed spoken sentence, counting
    the requests per item id."""

    def __init__(self, replies: dict[str, tuple[str, bytes]]) -> None:
        self.replies = replies
        self.lock = threading.Lock()
        self.per_item: Counter[str] = Counter()

    def __call__(self, path: str, body: Any) -> FakeResponse:
        match = ITEM_ID.search(body)
        assert match is not None, "the http system sent no item_id"
        item_id = match.group(1).decode()
        with self.lock:
            self.per_item[item_id] += 1
        text, wav = self.replies[item_id.split("__")[0]]
        return FakeResponse(json_body={"audio": base64.b64encode(wav).decode(), "text": text})

    def counts(self) -> dict[str, int]:
        with self.lock:
            return dict(self.per_item)


def query_tone(index: int) -> Audio:
    t = np.arange(round(QUERY_SECONDS * 16000)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * (200 + 25 * index) * t)).astype(np.float32), 16000)


def single_turn_configs(
    tmp_path: Path,
    url: str,
    n: int,
    metrics: list[str],
    concurrency: int = 2,
    *,
    shared_cache: bool = False,
) -> tuple[Path, Path]:
    """A suite of ``n`` spoken queries and one ``http`` system at ``url``; the same run
    config twice (to be killed / uninterrupted), each with its own call cache so the second
    run's scores are computed again rather than read from the first's cache.
    ``shared_cache``: one cache for both, for metrics that call no cached model (duration):
    the second report's input check (Whisper base and DNSMOS on every query) is then read
    from the first's. The system under test is never cached."""
    suite_dir = tmp_path / "suite"
    queries = []
    for i in range(n):
        write_audio(query_tone(i), suite_dir / f"q{i}.wav")
        queries.append({"id": f"q{i}", "text": f"Question {i}?", "category": "II",
                        "audio": f"q{i}.wav"})  # fmt: skip
    (suite_dir / "suite.yaml").write_text(
        yaml.safe_dump({"name": "kill", "protocol": "single_turn", "queries": queries})
    )
    paths = []
    for name in ("killed", "uninterrupted"):
        config = {
            "suite": str(suite_dir),
            "systems": [{"name": "fixed", "type": "http", "url": url + "/reply"}],
            "metrics": metrics,
            "build": {"profiles": 1, "conditions": ["clean"]},
            "scoring": {"k": 1},
            "seed": 11,
            "concurrency": concurrency,
            "cache_dir": str(tmp_path / ("cache" if shared_cache else f"cache-{name}")),
        }
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        paths.append(path)
    return paths[0], paths[1]
