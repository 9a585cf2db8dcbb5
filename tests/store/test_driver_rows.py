"""The SQLite driver path of shared statements stores exactly what SQLAlchemy's path stores,
and steps aside where it could not."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.dialects import postgresql

from voxeval.protocols.contract import WorkUnit
from voxeval.providers.usage.usage_meter import ModelUsage
from voxeval.scoring.score import Score
from voxeval.store import RunStore, driver_rows, recorder, score_index, unit_rows
from voxeval.store.driver_rows import driver_form, execute_driver_rows
from voxeval.store.index import Index, scores_table
from voxeval.store.unit_statements import (
    DELETE_SCORE,
    END_UNIT,
    INSERT_SCORES,
    START_UNIT,
)

NOW = datetime(2026, 11, 27, 21, 5, 7, 123456)
TABLES = ("units", "scores", "usage", "model_usage")


def _run_units(folder: Path) -> list[tuple[Any, ...]]:
    """Every row (with each value's SQLite type) a store leaves after starting, costing and
    completing units: fresh ones, a re-scored one, one the plan never registered."""
    store = RunStore(folder)
    units = [WorkUnit(f"q{i}", "sys", 0, "clean", category="c") for i in range(3)]
    store.units.record_items(units[:2])
    scores = {
        "wer": Score(value=0.25, details={"hyp": "a b", "ops": [1, 2]}),
        "mos": Score(value=None, error="model failed: sk-not-a-key", details={}),
        "passed": Score(value=1.0, passed=True),
        "pending": Score(value=None, pending=True),
    }
    models = {("asr", "whisper", "tiny"): ModelUsage(calls=1, requests=2, audio_in_s=1.5)}
    for unit in units:
        store.recorder.start(unit)
        store.recorder.record_usage(
            unit, "judge", 2, 30, 4, 0.0012, requests=3, audio={"audio_in_s": 2}
        )
        store.recorder.record_model_usage(unit, "system:sys", models)
        store.units.complete(unit, scores, system_fault="timeout" if unit is units[1] else None)
    store.recorder.start(units[0])  # again, then scored anew
    store.units.complete(units[0], {"wer": Score(value=0.5, details=None)})
    rows: list[tuple[Any, ...]] = []
    with sqlite3.connect(folder / "index.sqlite") as conn:
        for table in TABLES:
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            typed = ", ".join(f'"{c}", typeof("{c}")' for c in columns if c != "run_id")
            query = f"SELECT {typed} FROM {table} ORDER BY 1, 2, 3"
            rows += [(table, *r) for r in conn.execute(query)]
    store.index.dispose()
    return rows


def test_the_driver_path_stores_what_sqlalchemy_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (recorder, score_index, unit_rows):  # where the store's rows get a time
        monkeypatch.setattr(module, "utcnow", lambda: NOW)
    fast = _run_units(tmp_path / "driver")
    used: list[str] = []
    real = driver_rows._compile

    def counting(statement: Any, dialect: Any, keys: tuple[str, ...]) -> Any:
        form = real(statement, dialect, keys)
        used.append(form.sql.split()[0] if form else "none")
        return form

    monkeypatch.setattr(driver_rows, "_forms", {})
    monkeypatch.setattr(driver_rows, "_compile", counting)
    again = _run_units(tmp_path / "driver-again")
    assert sorted(used) == ["DELETE", "INSERT", "INSERT", "INSERT", "UPDATE", "UPDATE"]
    monkeypatch.setattr(driver_rows, "driver_form", lambda *a: None)
    monkeypatch.setattr("voxeval.store.batched_writes.driver_form", lambda *a: None)
    slow = _run_units(tmp_path / "sqlalchemy")
    assert fast == again == slow
    assert ("scores", "q0|clean|sys|0", "text", "wer", "text") in {r[:5] for r in fast}
    stamps = {r[i] for r in fast for i, v in enumerate(r) if v == "2026-11-27 21:05:07.123456"}
    assert stamps  # DATETIME as SQLAlchemy writes it on SQLite
    details = {r[3]: r[11] for r in fast if r[0] == "scores" and r[1] == "q1|clean|sys|0"}
    assert details["wer"] == '{"hyp": "a b", "ops": [1, 2]}'
    assert details["mos"] == details["pending"] == "null"  # no details: JSON null, as text


def test_forms_of_every_shared_statement(tmp_path: Path) -> None:
    dialect = Index(f"sqlite:///{tmp_path / 'i.sqlite'}", "r").engine.dialect
    start = driver_form("start", START_UNIT.statement, dialect, ("b_run", "b_key", "b_now"))
    assert start is not None and start.names[-2:] == ("b_run", "b_key")
    assert start.fixed == {"status": "running", "error": None, "cause": None,
                           "system_fault": None, "attempts_1": 1, "finished_at": None}  # fmt: skip
    assert start.row({"b_run": "r", "b_key": "k", "b_now": NOW})[-3:] == (None, "r", "k")
    for shared in (END_UNIT, DELETE_SCORE):  # a parameter without a value
        assert driver_form(shared.name, shared.statement, dialect, ("b_run",)) is None
    # an INSERT that leaves a column to its Python default goes through SQLAlchemy
    keys = ("run_id", "unit_key", "metric", "value", "passed", "error", "details", "scored_at")
    assert driver_form("scores-no-pending", INSERT_SCORES.statement, dialect, keys) is None
    full = driver_form("scores", INSERT_SCORES.statement, dialect, (*keys, "pending"))
    assert full is not None and full.sql.startswith("INSERT INTO scores (")
    # a key the statement does not take, and another database
    extra = driver_form("scores-extra", INSERT_SCORES.statement, dialect, (*keys, "pending", "x"))
    assert extra is None
    assert driver_form("scores", INSERT_SCORES.statement, postgresql.dialect(), keys) is None


def test_rows_with_other_keys_are_left_to_sqlalchemy(tmp_path: Path) -> None:
    index = Index(f"sqlite:///{tmp_path / 'i.sqlite'}", "r")
    row = {"run_id": "r", "unit_key": "k", "metric": "m", "value": 1.0, "passed": None,
           "error": None, "details": None, "pending": 0, "scored_at": NOW}  # fmt: skip
    form = driver_form("scores", INSERT_SCORES.statement, index.engine.dialect, tuple(row))
    assert form is not None
    with index.write() as conn:
        odd = {**row, "metric": "n"}
        odd.pop("pending")
        assert execute_driver_rows(conn, form, [row, odd]) is None
        assert conn.execute(scores_table.select()).all() == []  # nothing ran
        assert execute_driver_rows(conn, form, [row, {**row, "metric": "n"}]) == 2
        stored = conn.execute(scores_table.select().order_by(scores_table.c.metric)).all()
    assert [(r.metric, r.value, r.details, r.scored_at) for r in stored] == [
        ("m", 1.0, None, NOW),
        ("n", 1.0, None, NOW),
    ]


def test_a_row_of_a_form_without_fixed_values_is_its_keys_in_order_processed() -> None:
    form = driver_rows.DriverForm("sql", ("a", "b", "c"), (None, str, None), {})
    assert form.row({"c": 3, "a": 1, "b": 2}) == (1, "2", 3)
    plain = driver_rows.DriverForm("sql", ("a", "b"), (None, None), {})
    assert plain.row({"b": [2], "a": 1}) == (1, [2])
    with pytest.raises(KeyError):
        form.row({"a": 1, "b": 2})


def test_a_form_with_one_name_or_fixed_values_gives_tuples_too() -> None:
    single = driver_rows.DriverForm("sql", ("a",), (float,), {})
    assert single.row({"a": 2}) == (2.0,)
    mixed = driver_rows.DriverForm("sql", ("a", "k", "b"), (None, None, str), {"k": "fixed"})
    assert mixed.row({"a": 1, "b": 5}) == (1, "fixed", "5")
