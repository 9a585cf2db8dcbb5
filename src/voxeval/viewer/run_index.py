"""Read access to one run's index for the viewer: status counts, the values the unit table
can filter on, a page of units and one unit's scores. Nothing here writes run data; opening
the index only adds the lookup indexes an older run lacks (``store.index``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from sqlalchemy import Engine, RowMapping, create_engine, func, select
from sqlalchemy.exc import SQLAlchemyError

from voxeval.json_types import JSONObject
from voxeval.store.index import open_engine, scores_table, units_table
from voxeval.viewer.unit_query import UnitQuery, count_statement, page_statement

FACET_TTL_S = 5.0  # a run still in progress gains systems and metrics; re-read now and then


class UnitScore(TypedDict):
    """One stored score of a unit as the unit page shows it; ``reasoning`` is added there
    (the judge's own words found in ``details``)."""

    metric: str
    value: float | None
    passed: bool | None
    error: str | None
    details: JSONObject
    pending: bool
    reasoning: NotRequired[list[tuple[str, str]]]


@dataclass(frozen=True)
class Facets:
    """The values present in a run, offered by the unit table's filters."""

    systems: tuple[str, ...]
    categories: tuple[str, ...]
    conditions: tuple[str, ...]
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class UnitRow:
    seq: int
    unit_key: str
    item_id: str
    system: str
    trial: int
    condition: str
    category: str
    status: str
    error: str | None
    cause: str | None
    system_fault: str | None
    attempts: int
    failed_metrics: int
    value: float | None = None
    passed: bool | None = None
    metric_error: str | None = None

    @property
    def outcome(self) -> str:
        """fail | pass | pending | error: a glanceable verdict of the unit."""
        if self.status == "failed":
            return "error"
        if self.status != "done":
            return "pending"
        if self.system_fault or self.failed_metrics:
            return "fail"
        return "pass"

    @property
    def badge_label(self) -> str:
        """The badge's word, saying what its colour says: a red badge never reads "done"."""
        outcome = self.outcome
        if outcome == "error":
            return "failed (our side)"
        if outcome == "pending":
            return self.status
        if outcome == "fail":
            if self.system_fault:
                return "system failed"
            plural = "s" if self.failed_metrics != 1 else ""
            return f"{self.failed_metrics} metric{plural} failed"
        return "done"


@dataclass(frozen=True)
class UnitPage:
    rows: tuple[UnitRow, ...]
    total: int
    query: UnitQuery

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.query.per_page))


def _open(url: str) -> Engine:
    try:
        return open_engine(url)
    except SQLAlchemyError:
        # a read-only copy of a run cannot take the schema upgrades: read it as it is
        return create_engine(url)


class RunIndex:
    """The index of one run, opened once and shared by the app's request threads."""

    def __init__(self, url: str, run_id: str) -> None:
        self.url = url
        self.run_id = run_id
        self.engine = _open(url)
        self._lock = threading.Lock()
        self._facets: tuple[float, Facets] | None = None

    def status_counts(self) -> dict[str, dict[str, int]]:
        """``{system: {"done", "failed", "pending", "system_faults"}}`` in one grouped query."""
        u = units_table
        query = (
            select(u.c.system, u.c.status, func.count(), func.count(u.c.system_fault))
            .where(u.c.run_id == self.run_id)
            .group_by(u.c.system, u.c.status)
        )
        out: dict[str, dict[str, int]] = {}
        with self.engine.connect() as conn:
            for system, status, n, faults in conn.execute(query).all():
                entry = out.setdefault(
                    system, {"done": 0, "failed": 0, "pending": 0, "system_faults": 0}
                )
                bucket = status if status in ("done", "failed") else "pending"
                entry[bucket] += int(n)
                if status == "done":
                    entry["system_faults"] += int(faults)
        return dict(sorted(out.items()))

    def facets(self) -> Facets:
        with self._lock:
            if self._facets is not None and time.monotonic() - self._facets[0] < FACET_TTL_S:
                return self._facets[1]
        u, s = units_table, scores_table
        with self.engine.connect() as conn:

            def values(column: Any, where: Any) -> tuple[str, ...]:
                rows = conn.execute(select(column).distinct().where(where)).scalars()
                return tuple(sorted(str(v) for v in rows if v is not None))

            facets = Facets(
                systems=values(u.c.system, u.c.run_id == self.run_id),
                categories=values(u.c.category, u.c.run_id == self.run_id),
                conditions=values(u.c.condition, u.c.run_id == self.run_id),
                metrics=values(s.c.metric, s.c.run_id == self.run_id),
            )
        with self._lock:
            self._facets = (time.monotonic(), facets)
        return facets

    def page(self, query: UnitQuery) -> UnitPage:
        """One page of the unit table and the number of units the filters keep."""
        with self.engine.connect() as conn:
            total = int(conn.execute(count_statement(self.run_id, query)).scalar() or 0)
            last = max(1, -(-total // query.per_page))
            if query.page > last:
                query = query.replace(page=last)
            rows = conn.execute(page_statement(self.run_id, query)).mappings().all()
        return UnitPage(tuple(_unit_row(r) for r in rows), total, query)

    def unit(self, seq: int) -> UnitRow | None:
        query = UnitQuery()
        statement = page_statement(self.run_id, query, seq=seq)
        with self.engine.connect() as conn:
            row = conn.execute(statement).mappings().first()
        return None if row is None else _unit_row(row)

    def neighbours(self, seq: int) -> tuple[int | None, int | None]:
        """The previous and next unit in plan order (for keyboard stepping)."""
        u = units_table
        mine = u.c.run_id == self.run_id
        with self.engine.connect() as conn:
            before = conn.execute(select(func.max(u.c.seq)).where(mine & (u.c.seq < seq))).scalar()
            after = conn.execute(select(func.min(u.c.seq)).where(mine & (u.c.seq > seq))).scalar()
        return before, after

    def first_units(self, system: str, item_ids: Sequence[str]) -> dict[tuple[str, str], int]:
        """``{(item id, condition): seq}`` of the first trial of each of ``system``'s cells
        among ``item_ids`` (the compare page links an item delta to these units)."""
        if not item_ids:
            return {}
        u = units_table
        query = (
            select(u.c.item_id, u.c.condition, func.min(u.c.seq))
            .where(
                (u.c.run_id == self.run_id)
                & (u.c.system == system)
                & u.c.item_id.in_(sorted(set(item_ids)))
            )
            .group_by(u.c.item_id, u.c.condition)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return {(str(item), str(cond)): int(seq) for item, cond, seq in rows}

    def unit_scores(self, unit_key: str) -> list[UnitScore]:
        """Every stored score of one unit, by metric name."""
        s = scores_table
        query = (
            select(s.c.metric, s.c.value, s.c.passed, s.c.error, s.c.details, s.c.pending)
            .where((s.c.run_id == self.run_id) & (s.c.unit_key == unit_key))
            .order_by(s.c.metric)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [
            {
                "metric": r["metric"],
                "value": r["value"],
                "passed": None if r["passed"] is None else bool(r["passed"]),
                "error": r["error"],
                "details": dict(r["details"] or {}),
                "pending": bool(r["pending"]),
            }
            for r in rows
        ]

    def dispose(self) -> None:
        self.engine.dispose()


def _unit_row(r: RowMapping) -> UnitRow:
    passed = r.get("passed")
    return UnitRow(
        seq=int(r["seq"]),
        unit_key=str(r["unit_key"]),
        item_id=str(r["item_id"]),
        system=str(r["system"]),
        trial=int(r["trial"]),
        condition=str(r["condition"]),
        category=str(r["category"]),
        status=str(r["status"]),
        error=r["error"],
        cause=r["cause"],
        system_fault=r["system_fault"],
        attempts=int(r["attempts"] or 0),
        failed_metrics=int(r["failed_metrics"] or 0),
        value=r.get("value"),
        passed=None if passed is None else bool(passed),
        metric_error=r.get("metric_error"),
    )
