"""The unit table's query: filters, sort and page, read from and written back to the URL
(so a view can be shared), and the SQL that answers it — one page at a time, with
LIMIT/OFFSET, never every unit."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypedDict, Unpack
from urllib.parse import urlencode

from sqlalchemy import Select, and_, exists, func, literal, or_, select
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import NamedFromClause, ScalarSelect

from voxeval.store.index import scores_table, units_table

PER_PAGE_CHOICES = (25, 50, 100, 200)
STATUSES = ("done", "failed", "pending")
OUTCOMES = ("pass", "fail", "not_run")
# Sortable columns; "value" and "passed" need a metric.
SORTS = (
    "seq",
    "item",
    "system",
    "condition",
    "category",
    "trial",
    "status",
    "failed_metrics",
    "value",
    "passed",
)


class UnitQueryChanges(TypedDict, total=False):
    """Fields of a ``UnitQuery`` to change (``replace``, ``params``)."""

    system: str
    category: str
    condition: str
    status: str
    metric: str
    outcome: str
    q: str
    sort: str
    order: str
    page: int
    per_page: int


@dataclass(frozen=True)
class UnitQuery:
    """Empty strings mean "no filter". ``outcome``: pass/fail/not_run of ``metric`` when one
    is chosen, else of the unit as a whole (fail: the unit failed, its system faulted or a
    metric with a threshold failed)."""

    system: str = ""
    category: str = ""
    condition: str = ""
    status: str = ""
    metric: str = ""
    outcome: str = ""
    q: str = ""  # item id contains
    sort: str = "seq"
    order: str = "asc"
    page: int = 1
    per_page: int = 50

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> UnitQuery:
        """Parse query parameters; unknown or malformed values fall back to the defaults."""

        def text(name: str) -> str:
            return str(params.get(name) or "").strip()[:500]

        def number(name: str, default: int) -> int:
            try:
                return int(str(params.get(name) or default))
            except ValueError:
                return default

        metric = text("metric")
        sort = text("sort") or "seq"
        if sort not in SORTS or (sort in ("value", "passed") and not metric):
            sort = "seq"
        per_page = number("per_page", 50)
        return cls(
            system=text("system"),
            category=text("category"),
            condition=text("condition"),
            status=text("status") if text("status") in STATUSES else "",
            metric=metric,
            outcome=text("outcome") if text("outcome") in OUTCOMES else "",
            q=text("q"),
            sort=sort,
            order="desc" if text("order") == "desc" else "asc",
            page=max(1, number("page", 1)),
            per_page=per_page if per_page in PER_PAGE_CHOICES else 50,
        )

    def replace(self, **changes: Unpack[UnitQueryChanges]) -> UnitQuery:
        return replace(self, **changes)

    def params(self, **changes: Unpack[UnitQueryChanges]) -> str:
        """The URL query string of this view with ``changes`` (defaults left out)."""
        data = replace(self, **changes)
        default = UnitQuery()
        pairs = [
            (f.name, getattr(data, f.name))
            for f in fields(self)
            if getattr(data, f.name) != getattr(default, f.name)
        ]
        return urlencode(pairs)

    def sorted_by(self, column: str) -> str:
        """The query string that sorts by ``column`` (toggling the order when it already
        does), back on the first page."""
        order = "desc" if self.sort == column and self.order == "asc" else "asc"
        return self.params(sort=column, order=order, page=1)

    @property
    def active_filters(self) -> int:
        return sum(
            bool(v)
            for v in (self.system, self.category, self.condition, self.status, self.outcome, self.q)
        )


_u, _s = units_table, scores_table


def _metric_score() -> NamedFromClause:
    return _s.alias("chosen")


def _failed_metrics() -> ScalarSelect[int]:
    """The number of the unit's metrics with a threshold verdict of fail (a correlated
    subquery: evaluated through the scores primary key, per unit)."""
    f = _s.alias("failed")
    return (
        select(func.count())
        .where((f.c.run_id == _u.c.run_id) & (f.c.unit_key == _u.c.unit_key) & (f.c.passed == 0))
        .scalar_subquery()
    )


def _any_score(condition: Callable[[NamedFromClause], ColumnElement[bool]]) -> ColumnElement[bool]:
    f = _s.alias("any_score")
    return exists().where(
        (f.c.run_id == _u.c.run_id) & (f.c.unit_key == _u.c.unit_key) & condition(f)
    )


def _base(run_id: str, query: UnitQuery, columns: list[Any]) -> tuple[Select[Any], Any]:
    chosen = _metric_score()
    statement = select(*columns).select_from(_u)
    if query.metric:
        statement = statement.outerjoin(
            chosen,
            (chosen.c.run_id == _u.c.run_id)
            & (chosen.c.unit_key == _u.c.unit_key)
            & (chosen.c.metric == query.metric),
        )
    conditions: list[Any] = [_u.c.run_id == run_id]
    for column, value in (
        (_u.c.system, query.system),
        (_u.c.category, query.category),
        (_u.c.condition, query.condition),
    ):
        if value:
            conditions.append(column == value)
    if query.status == "pending":
        conditions.append(_u.c.status.not_in(("done", "failed")))
    elif query.status:
        conditions.append(_u.c.status == query.status)
    if query.q:
        conditions.append(func.lower(_u.c.item_id).contains(query.q.lower(), autoescape=True))
    if query.outcome:
        conditions.append(_outcome_condition(query, chosen))
    return statement.where(and_(*conditions)), chosen


def _outcome_condition(query: UnitQuery, chosen: NamedFromClause) -> ColumnElement[bool]:
    if query.metric:
        if query.outcome == "pass":
            return chosen.c.passed == 1
        if query.outcome == "fail":
            return chosen.c.passed == 0
        return chosen.c.value.is_(None)  # not run, pending, or no score at all
    failed_metric = _any_score(lambda f: f.c.passed == 0)
    if query.outcome == "fail":
        return or_(_u.c.status == "failed", _u.c.system_fault.is_not(None), failed_metric)
    if query.outcome == "pass":
        return and_(
            _u.c.status == "done",
            _u.c.system_fault.is_(None),
            ~failed_metric,
            _any_score(lambda f: f.c.passed == 1),
        )
    return _any_score(lambda f: f.c.value.is_(None))


def count_statement(run_id: str, query: UnitQuery) -> Select[Any]:
    statement, _ = _base(run_id, query, [func.count()])
    return statement


def page_statement(run_id: str, query: UnitQuery, *, seq: int | None = None) -> Select[Any]:
    """The rows of ``query``'s page (or the single unit ``seq``), with the chosen metric's
    value and verdict and the unit's count of failed metrics."""
    failed = _failed_metrics().label("failed_metrics")
    columns: list[Any] = [
        _u.c.seq,
        _u.c.unit_key,
        _u.c.item_id,
        _u.c.system,
        _u.c.trial,
        _u.c.condition,
        _u.c.category,
        _u.c.status,
        _u.c.error,
        _u.c.cause,
        _u.c.system_fault,
        _u.c.attempts,
        failed,
    ]
    statement, chosen = _base(run_id, query, columns)
    if query.metric:
        statement = statement.add_columns(
            chosen.c.value.label("value"),
            chosen.c.passed.label("passed"),
            chosen.c.error.label("metric_error"),
        )
    if seq is not None:
        return statement.where(_u.c.seq == seq).limit(1)
    sort_columns: dict[str, Any] = {
        "seq": _u.c.seq,
        "item": _u.c.item_id,
        "system": _u.c.system,
        "condition": _u.c.condition,
        "category": _u.c.category,
        "trial": _u.c.trial,
        "status": _u.c.status,
        "failed_metrics": failed,
        "value": chosen.c.value if query.metric else literal(0),
        "passed": chosen.c.passed if query.metric else literal(0),
    }
    key = sort_columns[query.sort]
    primary = key.desc() if query.order == "desc" else key.asc()
    # Missing values last in either order; plan order breaks ties so pages never overlap.
    ordering = [key.is_(None).asc(), primary] if query.sort in ("value", "passed") else [primary]
    return (
        statement.order_by(*ordering, _u.c.seq.asc())
        .limit(query.per_page)
        .offset((query.page - 1) * query.per_page)
    )
