"""Stored results of comparison steps across systems: one row per comparison in the index's
``comparisons`` table and one file ``comparisons/<step>/<key>.json`` per comparison (both
redacted). The file is written before the row is committed, so a row never points at a
missing file; a result that is ``done`` is never replaced by one that is not."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select

from voxeval import atomic_files
from voxeval.redaction import redact_env_secrets, scrub
from voxeval.runformat import ComparisonFile, record_data
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.store import layout
from voxeval.store.index import RunIndex, comparisons_table, utcnow

STATUSES = ("done", "pending", "failed", "not_run")


@dataclass(frozen=True)
class ComparisonRecord:
    """One stored comparison: its step, key, the unit keys it read and its outcome."""

    step: str
    key: str
    unit_keys: tuple[str, ...]
    status: str
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    cause: str | None = None
    attempts: int = 0
    compared_at: datetime | None = None  # when this outcome was stored (judging order)


class ComparisonStore:
    """The comparisons of one run (``RunStore.comparisons``)."""

    def __init__(self, index: RunIndex, run_dir: Path) -> None:
        self.index = index
        self.folder = run_dir / layout.COMPARISONS_DIR

    def path(self, step: str, key: str) -> Path:
        """``comparisons/<step>/<safe key>.json``."""
        return self.folder / layout.safe_name(step) / f"{layout.safe_name(key)}.json"

    def _filter(self, step: str, key: str) -> Any:
        t = comparisons_table
        return (t.c.run_id == self.index.run_id) & (t.c.step == step) & (t.c.comparison_key == key)

    def save(self, step: str, key: str, unit_keys: Sequence[str], result: ComparisonResult) -> bool:
        """Store ``result`` (file, then index row). Returns False, storing nothing, when a
        ``done`` result is stored already and ``result`` is not done (a judge that is down
        must not erase a verdict)."""
        t = comparisons_table
        with self.index.read() as conn:
            stored = conn.execute(
                select(t.c.status, t.c.attempts).where(self._filter(step, key))
            ).first()
        if stored is not None and stored[0] == "done" and not result.is_done:
            return False
        now = utcnow()
        error = redact_env_secrets(result.error) if result.error else None
        clean = scrub(result.result) or {}
        document = {
            "step": step,
            "key": key,
            "units": list(unit_keys),
            "status": result.status,
            "result": clean,
            "error": error,
            "cause": result.cause,
            "compared_at": now.isoformat(timespec="seconds") + "Z",
        }
        target = self.path(step, key)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_files.write_json_atomic(target, record_data(ComparisonFile, document, target))
        row = {
            "run_id": self.index.run_id,
            "step": step,
            "comparison_key": key,
            "unit_keys": list(unit_keys),
            "status": result.status,
            "result": clean or None,
            "error": error,
            "cause": result.cause,
            "attempts": int(stored[1] or 0) + 1 if stored is not None else 1,
            "compared_at": now,
        }
        with self.index.write() as conn:
            conn.execute(delete(t).where(self._filter(step, key)))
            conn.execute(t.insert(), [row])
        return True

    def records(self, step: str | None = None) -> list[ComparisonRecord]:
        """Stored comparisons, by step and key."""
        t = comparisons_table
        query = select(t).where(t.c.run_id == self.index.run_id)
        if step is not None:
            query = query.where(t.c.step == step)
        with self.index.read() as conn:
            rows = conn.execute(query.order_by(t.c.step, t.c.comparison_key)).mappings().all()
        return [
            ComparisonRecord(
                step=r["step"],
                key=r["comparison_key"],
                unit_keys=tuple(r["unit_keys"] or ()),
                status=r["status"],
                result=dict(r["result"] or {}),
                error=r["error"],
                cause=r["cause"],
                attempts=int(r["attempts"] or 0),
                compared_at=r["compared_at"],
            )
            for r in rows
        ]

    def statuses(self) -> dict[tuple[str, str], str]:
        """``{(step, key): status}`` of every stored comparison."""
        t = comparisons_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(t.c.step, t.c.comparison_key, t.c.status).where(
                    t.c.run_id == self.index.run_id
                )
            ).all()
        return {(step, key): status for step, key, status in rows}

    def counts(self) -> dict[str, dict[str, int]]:
        """``{step: {"done": n, "pending": n, "failed": n, "not_run": n}}``."""
        t = comparisons_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(t.c.step, t.c.status, func.count())
                .where(t.c.run_id == self.index.run_id)
                .group_by(t.c.step, t.c.status)
            ).all()
        out: dict[str, dict[str, int]] = {}
        for step, status, n in rows:
            counts = out.setdefault(step, dict.fromkeys(STATUSES, 0))
            counts[status] = counts.get(status, 0) + int(n)
        return out

    def incomplete(self) -> int:
        """Stored comparisons that are not done (pending, failed or not run)."""
        return sum(n for counts in self.counts().values() for s, n in counts.items() if s != "done")

    def clear(self) -> None:
        """Forget every comparison of the run (``--no-resume``)."""
        t = comparisons_table
        with self.index.write() as conn:
            conn.execute(delete(t).where(t.c.run_id == self.index.run_id))
        shutil.rmtree(self.folder, ignore_errors=True)
