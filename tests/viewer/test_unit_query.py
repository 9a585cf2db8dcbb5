"""The unit table's SQL over a generated run: counts, pages, sorts and URL round trips."""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.viewer.synthetic_run import SyntheticRun
from voxeval.viewer.run_catalog import Catalog
from voxeval.viewer.run_index import RunIndex
from voxeval.viewer.unit_query import UnitQuery


def open_index(run: SyntheticRun) -> RunIndex:
    catalog = Catalog([run.path], None)
    (info,) = catalog.scan()
    index = catalog.index(info)
    assert index is not None
    return index


def all_units(run: SyntheticRun) -> list[tuple[Any, ...]]:
    with sqlite3.connect(run.path / "index.sqlite") as db:
        return db.execute("SELECT seq, system, status, category FROM units ORDER BY seq").fetchall()


def test_pages_cover_every_unit_once_in_plan_order(generated_run: SyntheticRun) -> None:
    index = open_index(generated_run)
    seen: list[int] = []
    page = index.page(UnitQuery(per_page=25))
    assert page.total == generated_run.units == 130 and page.pages == 6
    for number in range(1, page.pages + 1):
        rows = index.page(UnitQuery(per_page=25, page=number)).rows
        assert len(rows) == (25 if number < 6 else 5)
        seen += [r.seq for r in rows]
    assert seen == [u[0] for u in all_units(generated_run)]
    beyond = index.page(UnitQuery(per_page=25, page=99))  # clamped to the last page
    assert beyond.query.page == 6 and [r.seq for r in beyond.rows] == seen[-5:]


def test_filters_count_what_the_index_holds(generated_run: SyntheticRun) -> None:
    index = open_index(generated_run)
    units = all_units(generated_run)
    beta = index.page(UnitQuery(system="beta", per_page=200))
    assert beta.total == sum(1 for u in units if u[1] == "beta")
    assert {r.system for r in beta.rows} == {"beta"}
    failed = index.page(UnitQuery(status="failed", per_page=200))
    assert failed.total == generated_run.failed == sum(1 for u in units if u[2] == "failed")
    assert all(r.cause == "judge" and r.outcome == "error" for r in failed.rows)
    pending = index.page(UnitQuery(status="pending"))
    assert pending.total == generated_run.pending
    billing = index.page(UnitQuery(category="billing", system="alpha", per_page=200))
    assert billing.total == sum(1 for u in units if u[3] == "billing" and u[1] == "alpha")
    with sqlite3.connect(generated_run.path / "index.sqlite") as db:
        fails = db.execute(
            "SELECT count(*) FROM scores WHERE metric='task_completion' AND passed=0"
        ).fetchone()[0]
    tc_fail = index.page(UnitQuery(metric="task_completion", outcome="fail"))
    assert tc_fail.total == fails > 0
    assert all(r.passed is False and r.value == 0.0 for r in tc_fail.rows)
    not_run = index.page(UnitQuery(metric="task_completion", outcome="not_run"))
    assert not_run.total == generated_run.failed + generated_run.pending  # no score at all


def test_sort_by_a_metric_puts_missing_values_last_both_ways(generated_run: SyntheticRun) -> None:
    index = open_index(generated_run)
    for order in ("asc", "desc"):
        query = UnitQuery(metric="response_latency", sort="value", order=order, per_page=200)
        values = [r.value for r in index.page(query).rows]
        present = [v for v in values if v is not None]
        assert present == sorted(present, reverse=order == "desc")
        assert values[len(present) :] == [None] * (len(values) - len(present))
        assert len(values) - len(present) == generated_run.failed + generated_run.pending
    failed_first = index.page(UnitQuery(sort="failed_metrics", order="desc", per_page=200)).rows
    counts = [r.failed_metrics for r in failed_first]
    assert counts == sorted(counts, reverse=True) and counts[0] >= 1


def test_query_round_trips_through_the_url() -> None:
    query = UnitQuery(system="a b", metric="task_completion", outcome="fail", sort="value",
                      order="desc", page=3, per_page=100)  # fmt: skip
    text = query.params()
    assert text == (
        "system=a+b&metric=task_completion&outcome=fail&sort=value&order=desc&page=3&per_page=100"
    )
    from urllib.parse import parse_qsl

    assert UnitQuery.from_params(dict(parse_qsl(text))) == query
    assert UnitQuery().params() == ""
    # malformed values fall back to the defaults; a metric sort needs a metric
    odd = UnitQuery.from_params(
        {"page": "x", "per_page": "7", "sort": "value", "status": "weird", "order": "up"}
    )
    assert (odd.page, odd.per_page, odd.sort, odd.status, odd.order) == (1, 50, "seq", "", "asc")
    # sorting by the current column flips the order (ascending is the default, left out)
    assert query.sorted_by("value") == text.replace("&order=desc", "").replace("&page=3", "")
    assert "order=desc" in query.replace(order="asc").sorted_by("value")
