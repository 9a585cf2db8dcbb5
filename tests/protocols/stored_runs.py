"""A real run folder holding given score rows, and the run context over it, for tests of the
summaries: the rows go through ``RunStore.complete`` (the index and ``scores.json``) and come
back through ``load_scores``, as in a run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from voxeval.api.context import RunContext
from voxeval.config import RunConfig
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import RunStore
from voxeval.store.records import ScoreRow


def store_rows(store: RunStore, rows: Iterable[ScoreRow]) -> None:
    """Complete one unit per (item, system, trial, condition) with its rows' scores."""
    by_unit: dict[WorkUnit, dict[str, Score]] = defaultdict(dict)
    for row in rows:
        unit = WorkUnit(row.item_id, row.system, row.trial, row.condition, row.category)
        by_unit[unit][row.metric] = Score(
            value=row.value,
            passed=row.passed,
            details=dict(row.details),
            error=row.error,
            pending=row.pending,
        )
    for unit, scores in by_unit.items():
        store.units.complete(unit, scores)


def stored_context(
    tmp_path: Path, rows: Iterable[ScoreRow], metrics: Sequence[str], **config: Any
) -> RunContext:
    """A run context whose store (a run folder under ``tmp_path``) holds ``rows``; its config
    names ``metrics`` and one system per system of the rows."""
    rows = list(rows)
    systems = sorted({row.system for row in rows})
    run_config = RunConfig(
        suite="x",
        systems=[{"name": name, "type": "scripted"} for name in systems],
        metrics=list(metrics),
        **config,
    )
    store = RunStore(tmp_path / "run")
    store_rows(store, rows)
    return RunContext(config=run_config, store=store, seed=run_config.seed)
