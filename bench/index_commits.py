"""CPU per unit of committing finished units to the index, by how many finish together.

A unit that finishes queues its usage rows, its model-usage rows, writes ``scores.json`` and
commits its scores and its ``done`` row (``RunStore.complete_later``). When B units finish
while a commit is under way they share the next transaction (group commit) and, since
2026-11-27, its statements: one executemany per statement for the whole batch. This script
queues B such units with the commit held, then commits them, and reports the CPU time of
the whole thing per unit (this thread only: nothing else runs). Batch 1 is a unit finishing
alone (concurrency 1); 16 and 64 are what concurrency 16 and 64 produce at most.

    python bench/index_commits.py [BATCH ...] [--rounds N] [--run-root DIR]

Best of three passes of ``--rounds`` batches each; the run folder goes to ``--run-root``
(default: the system's temporary folder; creating ``scores.json`` is part of the cost, and
the file system decides what that costs, see docs/runs.md).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from bench_args import parser_for  # bench/, the script's folder
from sqlalchemy import event

from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import RunStore

METRICS = ["assertions", "checklist", "duration", "language", "mos", "speaking_rate", "wer"]
MODEL = SimpleNamespace(
    calls=1, requests=1, retries=0, timeouts=0, prompt_tokens=12, completion_tokens=30,
    prompt_audio_tokens=0, completion_audio_tokens=0, audio_in_s=1.0, audio_out_s=2.0,
)  # fmt: skip


def finish_together(store: RunStore, units: list[WorkUnit]) -> None:
    """What ``units`` finishing during one commit do, then that commit."""
    scores = {name: Score(value=1.0) for name in METRICS}
    committer = store.writes.committer
    committer._leading = True  # a commit under way: every write below queues
    try:
        done = []
        for unit in units:
            store.recorder.record_usage(unit, "system:bench", 1, 12, 30, 0.0, requests=1)
            store.recorder.record_model_usage(
                unit, "system:bench", {("system", "http", "m"): MODEL}
            )
            done.append(store.units.complete_later(unit, scores))
    finally:
        committer._leading = False
    store.flush()
    for future in done:
        future.result()


def measure(batch: int, rounds: int, root: Path) -> tuple[float, float]:
    """(best CPU ms per unit, statements per unit) over three passes."""
    with tempfile.TemporaryDirectory(dir=root) as folder:
        return _measure_in(RunStore(folder), batch, rounds)


def _measure_in(store: RunStore, batch: int, rounds: int) -> tuple[float, float]:
    passes = 3
    units = [WorkUnit(f"q{i}", "bench", 0, "clean", "c") for i in range(batch * rounds * passes)]
    store.units.record_items(units)
    for unit in units:
        store.recorder.start(unit)
    statements = [0]

    def count(*_: object) -> None:
        statements[0] += 1

    event.listen(store.index.engine, "before_cursor_execute", count)
    best = float("inf")
    for done in range(passes):
        cpu = 0.0
        for r in range(rounds):
            first = (done * rounds + r) * batch
            started = time.thread_time()
            finish_together(store, units[first : first + batch])
            cpu += time.thread_time() - started
        best = min(best, cpu * 1000 / (batch * rounds))
    store.close()
    return best, statements[0] / len(units)


def main() -> None:
    parser = parser_for(__doc__)
    parser.add_argument("batches", nargs="*", type=int, default=[1, 16, 64], metavar="BATCH")
    parser.add_argument("--rounds", type=int, default=20, help="batches per pass (default 20)")
    parser.add_argument("--run-root", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    root = args.run_root or Path(tempfile.gettempdir())
    for batch in args.batches:
        cpu, statements = measure(batch, args.rounds, root)
        print(
            f"batch {batch:3d}: {cpu:.3f} ms CPU per unit, {statements:.2f} statements per unit "
            f"(usage, model usage, scores.json and {len(METRICS)} scores, done)"
        )


if __name__ == "__main__":
    main()
