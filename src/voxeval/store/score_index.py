"""The scores of a run's units: each unit's ``scores.json`` and its rows in the index's
``scores`` table, written together (the file first, atomically)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import func, select

from voxeval import atomic_files
from voxeval.json_types import JSONValue
from voxeval.redaction import redact_env_secrets, scrub
from voxeval.runformat import UnitScores, record_data
from voxeval.scoring.score import Score
from voxeval.store import layout
from voxeval.store.batched_writes import Rows
from voxeval.store.index import RunIndex, scores_table, units_table, utcnow
from voxeval.store.records import ScoreRow, UnitLike
from voxeval.store.run_folder import RunFolder
from voxeval.store.shared_reads import SharedReads
from voxeval.store.unit_statements import DELETE_SCORE, INSERT_SCORES
from voxeval.store.unit_writes import UnitWrites

# One row of the scores table as written: text, numbers, the details (JSON) and a time.
ScoreParams = dict[str, JSONValue | datetime]


class ScoreIndex:
    """The stored scores of one run (``RunStore.scores``)."""

    def __init__(
        self, index: RunIndex, writes: UnitWrites, folder: RunFolder, reads: SharedReads
    ) -> None:
        self.index = index
        self.writes = writes
        self.folder = folder
        self.reads = reads

    def save(self, unit: UnitLike, scores: Mapping[str, Score]) -> list[str]:
        """Merge re-scored ``scores`` into the unit's ``scores.json`` and the index: a metric
        scored again replaces its previous value, other metrics are kept — except that a
        stored value that ran is never replaced by a pending or not-run result (a judge that
        is down must not erase good scores). Returns the metrics whose old value was kept."""
        ran_before = self._ran_metrics(unit, list(scores))
        kept = [m for m, score in scores.items() if m in ran_before and not score.ran]
        fresh = {m: score for m, score in scores.items() if m not in kept}
        if fresh:
            rows = self.write_file(unit, fresh)
            committed = self.writes.submit_later(*self.replace_writes(unit, fresh, rows))
            # with what the re-scoring cost (a judge's usage), queued before
            self.writes.with_deferred(unit, committed).result()
        else:
            earlier = self.writes.take_deferred(unit)
            self.writes.flush()
            for committed in earlier:
                committed.result()  # raises what a queued write raised
        return kept

    def _ran_metrics(self, unit: UnitLike, metrics: list[str]) -> set[str]:
        s = scores_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(s.c.metric).where(
                    (s.c.run_id == self.index.run_id)
                    & (s.c.unit_key == unit.key)
                    & (s.c.metric.in_(metrics))
                    & s.c.value.is_not(None)
                    & s.c.error.is_(None)
                )
            ).scalars()
            return set(rows)

    def write_file(self, unit: UnitLike, scores: Mapping[str, Score]) -> list[ScoreParams]:
        """Merge ``scores`` into the unit's ``scores.json`` (atomically); returns their index
        rows."""
        path = self.folder.unit_dir(unit) / layout.SCORES_FILE
        existing = atomic_files.read_json(path) or {}
        entries = {name: scrub(s.to_dict()) for name, s in scores.items()}  # scrubbed once
        merged = record_data(UnitScores, {**existing, **entries}, path)  # validates the file
        atomic_files.write_record_json_atomic(path, merged)
        now = utcnow()
        rows = [
            {
                "run_id": self.index.run_id,
                "unit_key": unit.key,
                "metric": name,
                "value": None if score.value is None else float(score.value),
                "passed": None if score.passed is None else int(bool(score.passed)),
                "error": redact_env_secrets(score.error) if score.error else None,
                "details": entries[name]["details"] or None,
                "pending": int(score.pending),
                "scored_at": now,
            }
            for name, score in scores.items()
        ]
        return rows

    def replace_writes(
        self, unit: UnitLike, scores: Mapping[str, Score], rows: list[ScoreParams]
    ) -> list[Rows]:
        """The writes that replace the unit's index rows of ``scores`` with ``rows``."""
        run_id = self.index.run_id
        gone = [{"b_run": run_id, "b_key": unit.key, "b_metric": m} for m in scores]
        return [
            Rows(DELETE_SCORE, run_id, unit.key, gone),
            Rows(INSERT_SCORES, run_id, unit.key, rows),
        ]

    def load(
        self, system: str | None = None, *, only_done: bool = True, unit_key: str | None = None
    ) -> list[ScoreRow]:
        """Score rows in plan order; by default only for units whose status is ``done``;
        ``unit_key`` keeps one unit's."""
        if system is None and only_done and unit_key is None:
            return self.reads.read("scores", self._read)
        return self._read(system, only_done=only_done, unit_key=unit_key)

    def _read(
        self, system: str | None = None, *, only_done: bool = True, unit_key: str | None = None
    ) -> list[ScoreRow]:
        u, s = units_table, scores_table
        query = (
            select(
                u.c.item_id,
                u.c.system,
                u.c.trial,
                u.c.condition,
                u.c.category,
                s.c.metric,
                s.c.value,
                s.c.passed,
                s.c.error,
                s.c.details,
                s.c.pending,
            )
            .join(s, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where(u.c.run_id == self.index.run_id)
            .order_by(u.c.seq, s.c.metric)
        )
        if system is not None:
            query = query.where(u.c.system == system)
        if only_done:
            query = query.where(u.c.status == "done")
        if unit_key is not None:
            query = query.where(u.c.unit_key == unit_key)
        with self.index.read() as conn:
            rows = conn.execute(query).all()
        return [
            ScoreRow(
                item_id=r[0],
                system=r[1],
                trial=int(r[2]),
                condition=r[3],
                category=r[4],
                metric=r[5],
                value=r[6],
                passed=None if r[7] is None else bool(r[7]),
                error=r[8],
                details=dict(r[9] or {}),
                pending=bool(r[10]),
            )
            for r in rows
        ]

    def of_unit(self, unit_key: str) -> dict[str, ScoreRow]:
        """``{metric: row}`` of one unit, whatever its status (comparisons read these)."""
        return {row.metric: row for row in self.load(only_done=False, unit_key=unit_key)}

    def pending_counts(self) -> dict[str, int]:
        """Per system: the pending scores of its done units."""
        u, s = units_table, scores_table
        query = (
            select(u.c.system, func.count())
            .join(s, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where((u.c.run_id == self.index.run_id) & (u.c.status == "done") & (s.c.pending == 1))
            .group_by(u.c.system)
        )
        with self.index.read() as conn:
            return {system: int(n) for system, n in conn.execute(query).all()}

    def pending_metrics(self) -> dict[str, list[str]]:
        """``{unit_key: [metric, ...]}``: the pending scores of done units, to retry."""
        u, s = units_table, scores_table
        query = (
            select(s.c.unit_key, s.c.metric)
            .join(u, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where((u.c.run_id == self.index.run_id) & (u.c.status == "done") & (s.c.pending == 1))
            .order_by(u.c.seq, s.c.metric)
        )
        out: dict[str, list[str]] = defaultdict(list)
        with self.index.read() as conn:
            for key, metric in conn.execute(query).all():
                out[key].append(metric)
        return dict(out)
