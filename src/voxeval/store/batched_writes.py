"""Index writes described as rows of a shared statement, so that one commit runs the rows of
many units with one ``executemany`` per statement instead of one statement per unit.

SQLAlchemy spends tens of microseconds of CPU per executed statement whatever its size; a
unit writes six to ten small statements (its start, its usage rows, its scores, its end).
When units finish together their writes share a transaction (``group_commit``), and here
they also share the statements: a batch of 30 units runs about seven statements, not 250.

Order is kept where it matters. Rows of different units touch different index rows, so they
may run in any order; the writes of one unit run in the order of their statements'
``phase`` (start, usage, scores, end), which is the order a unit makes them. A write that
would go back to an earlier phase for its unit (a unit started again after it ended, in one
batch) starts a new group, so nothing of that unit moves past it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from voxeval.store.driver_rows import driver_form, execute_driver_rows
from voxeval.store.index import units_table

Params = dict[str, Any]


@dataclass(frozen=True)
class SharedStatement:
    """A statement built once whose rows many writes supply. ``updates_unit``: an UPDATE of
    the units table keyed by ``b_run``/``b_key`` (a unit not in the index yet is inserted by
    the write's ``if_absent`` instead)."""

    name: str
    statement: Executable
    phase: int
    updates_unit: bool = False


@dataclass
class Rows:
    """One write: ``rows`` of ``statement`` for the unit ``unit_key`` of run ``run_id``.
    ``if_absent`` runs instead of an ``updates_unit`` statement whose unit has no row."""

    statement: SharedStatement
    run_id: str
    unit_key: str
    rows: list[Params]
    if_absent: Callable[[Connection], object] | None = None


Write = Callable[[Connection], object] | Rows


def run_writes(conn: Connection, writes: Sequence[Write]) -> None:
    """Run ``writes`` in ``conn`` (one open transaction): plain functions in place, rows of
    the same statement together (see the module docstring)."""
    group: list[Rows] = []
    phases: dict[tuple[str, str], int] = {}  # unit -> the latest phase it reached in ``group``
    for write in writes:
        if not isinstance(write, Rows):
            _run_group(conn, group)
            group, phases = [], {}
            write(conn)
            continue
        unit = (write.run_id, write.unit_key)
        if write.statement.phase < phases.get(unit, -1):
            _run_group(conn, group)
            group, phases = [], {}
        group.append(write)
        phases[unit] = write.statement.phase
    _run_group(conn, group)


def _run_group(conn: Connection, group: list[Rows]) -> None:
    by_statement: dict[str, list[Rows]] = {}
    for write in sorted(group, key=lambda w: w.statement.phase):  # stable: order kept
        by_statement.setdefault(write.statement.name, []).append(write)
    for writes in by_statement.values():
        _run_shared(conn, writes)


def _run_shared(conn: Connection, writes: list[Rows]) -> None:
    """The rows of ``writes`` (all of one statement) in one execution."""
    shared = writes[0].statement
    params = [row for write in writes for row in write.rows]
    if not params:
        return
    rowcount = _run_on_driver(conn, shared, params)
    if rowcount is None:
        # one row: a plain execute, which SQLAlchemy runs with less work than an executemany
        rowcount = conn.execute(
            shared.statement, params[0] if len(params) == 1 else params
        ).rowcount
    if shared.updates_unit and not _every_row_matched(conn, rowcount, params):
        _insert_absent_units(conn, writes)


def _run_on_driver(conn: Connection, shared: SharedStatement, params: list[Params]) -> int | None:
    """The rows run as driver tuples (``driver_rows``: SQLite); None if they were not."""
    form = driver_form(shared.name, shared.statement, conn.dialect, tuple(params[0]))
    return None if form is None else execute_driver_rows(conn, form, params)


def _every_row_matched(conn: Connection, rowcount: int, params: list[Params]) -> bool:
    # each row names one unit by its primary key: all there exactly when the count adds up
    # (if the driver counts rows for this kind of execution; else the units are looked up)
    dialect = conn.dialect
    counts = (
        dialect.supports_sane_rowcount if len(params) == 1 else dialect.supports_sane_multi_rowcount
    )
    return bool(counts) and rowcount == len(params)


def _insert_absent_units(conn: Connection, writes: list[Rows]) -> None:
    """The writes whose unit had no row (their UPDATE changed nothing): the first one of each
    such unit inserts it (``if_absent``), later ones update the row it made."""
    absent = _absent_units(conn, writes)
    inserted: set[tuple[str, str]] = set()
    for write in writes:
        unit = (write.run_id, write.unit_key)
        if unit not in absent:
            continue
        if unit in inserted:
            conn.execute(write.statement.statement, write.rows)
        elif write.if_absent is not None:
            write.if_absent(conn)
            inserted.add(unit)


def _absent_units(conn: Connection, writes: Iterable[Rows]) -> set[tuple[str, str]]:
    """(run id, unit key) of the writes' units that have no row in the units table."""
    wanted: dict[str, set[str]] = {}
    for write in writes:
        wanted.setdefault(write.run_id, set()).add(write.unit_key)
    absent: set[tuple[str, str]] = set()
    u = units_table
    for run_id, keys in wanted.items():
        present = set(
            conn.execute(
                select(u.c.unit_key).where((u.c.run_id == run_id) & u.c.unit_key.in_(sorted(keys)))
            ).scalars()
        )
        absent |= {(run_id, key) for key in keys - present}
    return absent
