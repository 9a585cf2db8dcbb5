"""Rows of shared statements run together (one executemany per statement) with the same
result as running every write alone, in order."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert, select
from sqlalchemy.engine import Connection, Engine

from voxeval.protocols.contract import WorkUnit
from voxeval.providers.usage.usage_meter import ModelUsage
from voxeval.scoring.score import Score
from voxeval.store import RunStore
from voxeval.store.batched_writes import Rows, Write, run_writes
from voxeval.store.index import Index, model_usage_table, scores_table, units_table, usage_table
from voxeval.store.unit_rows import end_write
from voxeval.store.unit_statements import (
    DELETE_SCORE,
    END_UNIT,
    INSERT_SCORES,
    INSERT_UNIT,
    START_UNIT,
)

RUN = "run-1"
NOW = datetime(2026, 11, 27, 9, 0, 0)
PLANNED = ["u0", "u1", "u2"]  # registered by the plan; "u3" is not


@contextmanager
def counted(engine: Engine) -> Iterator[list[tuple[str, int]]]:
    """(statement's first word, rows) of every statement ``engine`` sends to the database."""
    seen: list[tuple[str, int]] = []

    def before(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: bool) -> None:
        seen.append((statement.split()[0], len(params) if many else 1))

    event.listen(engine, "before_cursor_execute", before)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", before)


def fresh_index(folder: Path, url: str | None = None) -> Index:
    index = Index(url or f"sqlite:///{folder / 'index.sqlite'}", RUN)
    with index.write() as conn:
        conn.execute(
            insert(units_table),
            [
                {"run_id": RUN, "unit_key": key, "seq": seq, "item_id": key, "system": "s",
                 "trial": 0, "condition": "clean", "category": "c", "status": "planned",
                 "attempts": 0}
                for seq, key in enumerate(PLANNED, start=1)
            ],
        )  # fmt: skip
    return index


def unit_row(key: str, seq: int, **values: Any) -> dict[str, Any]:
    return {"run_id": RUN, "unit_key": key, "seq": seq, "item_id": key, "system": "s",
            "trial": 0, "condition": "clean", "category": "c", **values}  # fmt: skip


def start(key: str) -> Rows:
    def insert_unit(conn: Connection) -> None:
        conn.execute(INSERT_UNIT, [unit_row(key, 99, status="running", attempts=1)])

    params = {"b_run": RUN, "b_key": key, "b_now": NOW}
    return Rows(START_UNIT, RUN, key, [params], if_absent=insert_unit)


def end(key: str, status: str) -> Rows:
    values = {"status": status, "error": None, "cause": None, "system_fault": None}

    def insert_unit(conn: Connection) -> None:
        conn.execute(INSERT_UNIT, [unit_row(key, 99, attempts=1, **values)])

    params = {"b_run": RUN, "b_key": key, "b_status": status, "b_error": None,
              "b_cause": None, "b_fault": None, "b_now": NOW}  # fmt: skip
    return Rows(END_UNIT, RUN, key, [params], if_absent=insert_unit)


def score(key: str, metric: str, value: float) -> list[Rows]:
    """The two writes that replace one score of a unit."""
    gone = [{"b_run": RUN, "b_key": key, "b_metric": metric}]
    row = {"run_id": RUN, "unit_key": key, "metric": metric, "value": value, "pending": 0}
    row["scored_at"] = NOW
    return [Rows(DELETE_SCORE, RUN, key, gone), Rows(INSERT_SCORES, RUN, key, [row])]


def state(conn: Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    units = conn.execute(
        select(units_table.c.unit_key, units_table.c.status, units_table.c.attempts).order_by(
            units_table.c.unit_key
        )
    ).all()
    scores = conn.execute(
        select(scores_table.c.unit_key, scores_table.c.metric, scores_table.c.value).order_by(
            scores_table.c.unit_key, scores_table.c.metric
        )
    ).all()
    return [tuple(r) for r in units], [tuple(r) for r in scores]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def index_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The index database: SQLite in the test's folder, or PostgreSQL by URL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'index.sqlite'}"
    return str(request.getfixturevalue("postgres_url"))


def test_units_committing_together_share_one_statement_each(tmp_path: Path, index_url: str) -> None:
    index = fresh_index(tmp_path, index_url)
    writes: list[Write] = []
    for key in PLANNED:
        writes += [*score(key, "duration", 1.0), end(key, "done")]
    with counted(index.engine) as seen, index.write() as conn:
        run_writes(conn, writes)
    assert seen == [("DELETE", 3), ("INSERT", 3), ("UPDATE", 3)]
    with index.write() as conn:
        assert state(conn)[0] == [(k, "done", 0) for k in PLANNED]


def test_a_unit_that_goes_back_a_phase_keeps_its_order(tmp_path: Path, index_url: str) -> None:
    index = fresh_index(tmp_path, index_url)
    with counted(index.engine) as seen, index.write() as conn:
        run_writes(conn, [start("u0"), start("u1"), end("u0", "failed"), start("u0")])
    # the second start of u0 may not run before its end: it opens a second group
    assert seen == [("UPDATE", 2), ("UPDATE", 1), ("UPDATE", 1)]
    with index.write() as conn:
        units = state(conn)[0]
    assert units[0] == ("u0", "running", 2)
    assert units[1] == ("u1", "running", 1)


def test_a_unit_the_plan_did_not_register_is_inserted_once(tmp_path: Path, index_url: str) -> None:
    index = fresh_index(tmp_path, index_url)
    with index.write() as conn:
        run_writes(conn, [start("u3"), start("u0"), start("u3")])
    with index.write() as conn:
        units = dict((k, (s, a)) for k, s, a in state(conn)[0])
    assert units["u3"] == ("running", 2)  # inserted by the first, updated by the second
    assert units["u0"] == ("running", 1)


def test_a_plain_function_sees_every_write_queued_before_it(tmp_path: Path) -> None:
    index = fresh_index(tmp_path)
    seen: list[Any] = []
    with index.write() as conn:
        run_writes(conn, [start("u0"), lambda c: seen.append(state(c)[0][0]), end("u0", "done")])
    assert seen == [("u0", "running", 1)]


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["u0", "u1", "u2", "u3"]),
        st.sampled_from(["start", "done", "failed", "score_a", "score_b", "look"]),
        st.integers(0, 9),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(operations=OPERATIONS)
def test_batched_writes_end_like_writes_run_one_by_one(
    tmp_path_factory: Any, operations: list[tuple[str, str, int]]
) -> None:
    def writes(looks: list[Any]) -> list[Write]:
        made: list[Write] = []
        for key, op, value in operations:
            if op == "start":
                made.append(start(key))
            elif op in ("done", "failed"):
                made.append(end(key, op))
            elif op == "look":
                made.append(lambda c: looks.append(state(c)))
            else:
                made += score(key, op[-1], float(value))
        return made

    together, alone = [], []
    batched = fresh_index(tmp_path_factory.mktemp("batched"))
    with batched.write() as conn:
        run_writes(conn, writes(together))
        together.append(state(conn))
    one_by_one = fresh_index(tmp_path_factory.mktemp("alone"))
    with one_by_one.write() as conn:
        for write in writes(alone):
            run_writes(conn, [write])
        alone.append(state(conn))
    assert together == alone


def test_a_store_commits_finishing_units_with_shared_statements(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    units = [WorkUnit(f"q{i}", "sys", 0, "clean", category="c") for i in range(4)]
    store.units.record_items(units)
    scores = {"duration": Score(value=2.0), "wer": Score(value=0.1)}
    ended = {"status": "done", "error": None, "cause": None, "system_fault": None}
    for u in units:  # what four units finishing during one commit leave queued
        rows = store.scores.write_file(u, scores)
        store.writes.committer.defer(
            *store.scores.replace_writes(u, scores, rows), end_write(store.index, u, "done", ended)
        )
    with counted(store.index.engine) as seen:
        store.flush()
    assert seen == [("DELETE", 8), ("INSERT", 8), ("UPDATE", 4)]
    assert store.units.finished_keys() == {u.key for u in units}
    assert {(r.item_id, r.metric): r.value for r in store.scores.load()} == {
        (u.item_id, m): s.value for u in units for m, s in scores.items()
    }


def test_usage_recorded_component_by_component_runs_one_statement_each(tmp_path: Path) -> None:
    # a unit records each component's usage and then its models, component after component:
    # the rows of both tables still go in one execution per table
    store = RunStore(tmp_path)
    unit = WorkUnit("q0", "sys", 0, "clean", category="c")
    store.units.record_items([unit])
    for component, model in (("scoring_asr", "whisper"), ("scoring_mos", "utmos")):
        store.recorder.record_usage(unit, component, calls=3, prompt_tokens=0, completion_tokens=0,
                           cost_usd=None)  # fmt: skip
        store.recorder.record_model_usage(
            unit, component, {("asr", "local", model): ModelUsage(calls=3, audio_in_s=1.5)}
        )
    with counted(store.index.engine) as seen:
        store.flush()
    assert sorted(seen) == [("INSERT", 2), ("INSERT", 2)]
    with store.index.read() as conn:
        models = conn.execute(
            select(model_usage_table.c.component, model_usage_table.c.model).order_by(
                model_usage_table.c.component
            )
        ).all()
        providers = conn.execute(select(usage_table.c.provider).order_by(usage_table.c.id)).all()
    assert [tuple(r) for r in models] == [("scoring_asr", "whisper"), ("scoring_mos", "utmos")]
    assert [r[0] for r in providers] == ["scoring_asr", "scoring_mos"]
