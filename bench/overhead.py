"""Framework overhead per item of a single-turn run, with instant stub components.

The suite is rendered first (a one-time, cached step, timed apart). Then the stub system
answers at once with a fixed clip, the stub ASR returns a fixed transcript and the stub MOS a
fixed value, so what remains is voxeval's own work per unit: planning, reading and writing
audio, reply.json and transcripts.json, scoring bookkeeping, the SQLite index, the progress
bar, and the report (bootstrap CIs, figures).

A run also has fixed costs (opening the run, the report with its figures: about 2 s) that a
per-item average over a small run would blame on every item. So runs of N and 2N items are
timed; the marginal cost of an item is (time(2N) - time(N)) / N, and the fixed cost per run
is time(N) - N x that. The same is done with the process's CPU time (every thread, user +
system): the run uses up to two cores, so CPU per item can exceed wall time per item, and
it moves less than wall time when other processes compete for the cores. The report's own
time varies by a few hundred ms from run to run, which the difference of two runs divides
by N only; so the unit pass alone (interact, score, commit: no planning, no report) is timed
too, as wall time per item of its best run. The two sizes alternate (N, 2N, N, 2N, ...), so a
drift of the machine weighs on both. Prints ``overhead_ms_per_item: X`` (the marginal wall
time, call cache off) last.

Every run's folder is kept until the script ends. Deleting a finished run (thousands of
files and folders) right before the next one is timed slowed that one's file system work for
a while: on this machine's ext4 (mounted with ``discard``) a unit's three-level folder took
85 us to create before a bench and 443 us right after, a small file 53 us and 178 us. A real
evaluation does not delete a run just before it starts. The same slowdown lasts minutes after
any large deletion on the disk (another bench's clean-up included), so the script probes how
fast the file system creates folders and small files before and after its runs and prints it
with the number of each a unit made (``file_system_probe.py``): a timing taken while creation
was several times slower than usual measured the disk as much as voxeval.

With ``--executor processes`` the runs spread their units over worker processes (one per
CPU); CPU then counts the workers and their fork server too, and the fixed cost includes
starting the workers.

    python bench/overhead.py [--executor local|processes] [N_ITEMS [REPEATS]]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import file_system_probe  # bench/, the script's folder
import numpy as np
import process_cpu  # bench/, the script's folder
import yaml
from bench_args import parser_for  # bench/, the script's folder
from instant_scorers import register_instant_scorers  # bench/, the script's folder
from rich.console import Console

from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.build import build_suite
from voxeval.config import SystemSpec, parse_run_config
from voxeval.registry import register
from voxeval.runner import execute
from voxeval.runner.execute import run_evaluation
from voxeval.systems.base import Reply, Turn

RATE = 16000
ITEMS = 200  # the smaller run; the larger has twice as many
CLIP = Audio((0.1 * np.sin(np.arange(RATE) * 0.05)).astype(np.float32), RATE)


register_instant_scorers("The answer is forty two.")

# Folders and files a run created per unit, counted once (after the first run).
entries_per_unit: list[tuple[float, float]] = []
# Wall ms per item of each run's unit pass: the runner's ``execute_units``, timed from here.
unit_pass_ms: list[float] = []
_execute_units = execute.execute_units


def _timed_execute_units(ctx: Any, units: list[Any], *args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    try:
        return _execute_units(ctx, units, *args, **kwargs)
    finally:
        if units and str(args[2:3] and args[2]).startswith("evaluating"):  # not re-scoring
            unit_pass_ms.append((time.perf_counter() - start) * 1000 / len(units))


execute.execute_units = _timed_execute_units


@register("system", "bench-instant")
class InstantSystem:
    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> InstantSystem:
        return cls(spec.name)

    def identity(self) -> dict[str, Any]:
        return {"type": "bench-instant"}

    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=CLIP, text="The answer is forty two.", timing={"total_s": 0.0})


def make_suite(folder: Path, n: int) -> Path:
    write_audio(CLIP, folder / "query.wav")
    queries = [
        {
            "id": f"q{i:04d}",
            "text": "What is six times seven?",
            "category": ["II", "SR", "OE", "TC"][i % 4],
            "checklist": ["Says 42"],
            "assertions": [{"kind": "number", "values": ["42"]}],
            "audio": "query.wav",
        }
        for i in range(n)
    ]
    suite = {"name": "bench", "protocol": "single_turn", "queries": queries}
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    return path


def main(n: int, parent: Path, executor: str = "local") -> tuple[float, float]:
    """(wall ms, CPU ms) per item of a run of ``n`` items, in a new folder in ``parent`` (left
    there: see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="run-", dir=parent))
    suite = make_suite(root, n)
    config = parse_run_config(
        {
            "suite": str(suite),
            "systems": [{"name": "instant", "type": "bench-instant"}],
            "asr": {"provider": "bench-instant"},
            "language_id": {"provider": "bench-instant"},
            "mos": {"provider": "bench-instant"},
            "build": {"dir": str(root / "built"), "profiles": 1, "conditions": ["clean"]},
            "concurrency": 2,  # the default
            "executor": executor,
            "cache_dir": str(root / "cache"),
        }
    )
    # Rendering the suite is a one-time, cached step (`voxeval build`); it is timed apart.
    start = time.perf_counter()
    build_suite(str(suite), root / "built", config.build, progress=False)
    build_ms = (time.perf_counter() - start) * 1000 / n
    console = Console(stderr=True, quiet=True)
    start, cpu = time.perf_counter(), process_cpu.cpu_seconds()
    run_evaluation(config, root / "run", console=console)
    elapsed, cpu = time.perf_counter() - start, process_cpu.cpu_seconds() - cpu
    if not entries_per_unit:
        entries_per_unit.append(file_system_probe.entries_per_unit(root / "run" / "items", n))
    print(f"suite build (one-time, cached): {build_ms:.2f} ms per item", file=sys.stderr)
    return elapsed * 1000 / n, cpu * 1000 / n


def _use_call_cache(on: bool) -> None:
    if on:
        os.environ.pop("VOXEVAL_NO_CACHE", None)
    else:
        os.environ["VOXEVAL_NO_CACHE"] = "1"


def _best(runs: list[tuple[float, float]], items: int) -> tuple[float, float]:
    """The fastest wall time and the least CPU time of ``runs`` (ms per item), as totals."""
    return min(w for w, _ in runs) * items, min(c for _, c in runs) * items


def marginal(
    items: int, repeats: int, parent: Path, *, call_cache: bool, executor: str = "local"
) -> tuple[float, float, float]:
    """(wall ms per extra item, fixed wall ms per run, CPU ms per extra item) from the
    fastest wall time and the least CPU time of ``repeats`` runs of ``items`` items and of as
    many runs of twice as many (like timeit: slower repeats measure other processes competing
    for the CPU). The two sizes alternate, so a drift of the machine affects both alike."""
    _use_call_cache(call_cache)
    small: list[tuple[float, float]] = []
    large: list[tuple[float, float]] = []
    for _ in range(repeats):
        small.append(main(items, parent, executor))
        large.append(main(2 * items, parent, executor))
    small_ms, small_cpu = _best(small, items)
    large_ms, large_cpu = _best(large, 2 * items)
    per_item = (large_ms - small_ms) / items
    return per_item, small_ms - items * per_item, (large_cpu - small_cpu) / items


def measure(items: int, repeats: int, parent: Path, executor: str) -> float:
    """Print the figures; returns the headline (wall ms per extra item, call cache off)."""
    before = file_system_probe.create_speed(parent)
    per_item, fixed, _ = marginal(items, repeats, parent, call_cache=True, executor=executor)
    print(f"with the provider call cache (4 cached calls/item): {per_item:.2f} ms per item")
    # The headline leaves the call cache out: it stores and replays provider calls, which only
    # pays off for real models (seconds per call) and is pure cost for instant stubs.
    unit_pass_ms.clear()
    per_item, fixed, cpu_per_item = marginal(
        items, repeats, parent, call_cache=False, executor=executor
    )
    print(f"fixed cost per run (open, plan, report with figures): {fixed:.0f} ms")
    print(
        f"unit pass alone (interact, score, commit): {min(unit_pass_ms):.2f} ms per item "
        f"(best of {len(unit_pass_ms)} runs)"
    )
    print(f"CPU per extra item (every thread, user + system): {cpu_per_item:.2f} ms")
    after = file_system_probe.create_speed(parent)
    folders, files = entries_per_unit[0]
    print(
        f"file system of the runs: {before.describe()} before the runs, "
        f"{after.describe()} after; a unit made {folders:.1f} folders and {files:.1f} files"
    )
    return per_item


if __name__ == "__main__":
    parser = parser_for(__doc__)
    parser.add_argument("items", nargs="?", type=int, default=ITEMS, help=f"N (default {ITEMS})")
    parser.add_argument("repeats", nargs="?", type=int, default=3, help="best of (default 3)")
    parser.add_argument(
        "--executor",
        choices=("local", "processes"),
        default="local",
        help="how the runs execute their units (default local: this process)",
    )
    args = parser.parse_args()
    items, repeats, executor = args.items, args.repeats, args.executor
    load = os.getloadavg()
    # the runs' folders are deleted together at the end (see the module docstring)
    with tempfile.TemporaryDirectory(prefix="voxeval-bench-overhead-") as folder:
        headline = measure(items, repeats, Path(folder), executor)
    print(
        f"runs of {items} and {2 * items} items, best of {repeats}; load average before "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
    )
    print(f"overhead_ms_per_item: {headline:.2f}")
