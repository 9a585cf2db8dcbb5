"""Rows of a shared statement handed to the SQLite driver as plain tuples.

For a statement built once and run with many rows, SQLAlchemy's own ``executemany`` spends
most of its CPU per row in Python: it builds each row's parameters from the compiled
statement, applies the type processors through generic machinery and checks every row's
keys, all while holding the GIL. Here the statement is compiled once per set of row keys;
each row then becomes a tuple in the compiled order with the same type processors applied
(the stored text of a DATETIME or a JSON value is byte for byte what SQLAlchemy writes), and
the tuples go to ``exec_driver_sql``: same connection, transaction, events and error
wrapping, less work per row.

Only SQLite (positional ``?`` parameters) takes this path, and only statements whose every
value comes from the row or from a fixed value in the statement: an INSERT that would fill a
column from its Python default, or rows whose keys differ, use SQLAlchemy's path unchanged.
PostgreSQL always does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.expression import Executable

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True)
class DriverForm:
    """A statement as the driver runs it: ``sql`` with ``?`` in the order of ``names``; a
    name in ``fixed`` takes that (processed) value, any other its row's."""

    sql: str
    names: tuple[str, ...]
    processors: tuple[Processor, ...]
    fixed: dict[str, Any]
    _take: Callable[[dict[str, Any]], tuple[Any, ...]] = field(
        init=False, repr=False, compare=False
    )
    _processed: tuple[tuple[int, Callable[[Any], Any]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # One C-level lookup of every value, then the few type processors: a third of the
        # time of a loop over the names (tens of rows per unit). Fixed values are processed
        # already.
        get = itemgetter(*self.names)
        take = get if len(self.names) > 1 else lambda row: (get(row),)
        processed = tuple(
            (i, process)
            for i, (name, process) in enumerate(zip(self.names, self.processors, strict=True))
            if process is not None and name not in self.fixed
        )
        object.__setattr__(self, "_take", take)
        object.__setattr__(self, "_processed", processed)

    def row(self, params: dict[str, Any]) -> tuple[Any, ...]:
        values = self._take({**self.fixed, **params} if self.fixed else params)
        if not self._processed:
            return values
        out = list(values)
        for i, process in self._processed:
            out[i] = process(out[i])
        return tuple(out)


# (statement name, row keys) -> form; two threads may compile the same one, with the same result
_forms: dict[tuple[str, tuple[str, ...]], DriverForm | None] = {}


def driver_form(
    name: str, statement: Executable, dialect: Dialect, keys: tuple[str, ...]
) -> DriverForm | None:
    """The driver form of ``statement`` (shared as ``name``) for rows with ``keys``, or None
    when it must run through SQLAlchemy (see the module docstring). Built once per process."""
    if dialect.name != "sqlite" or dialect.paramstyle != "qmark":
        return None
    try:
        return _forms[name, keys]
    except KeyError:
        form = _forms[name, keys] = _compile(statement, dialect, keys)
        return form


def _compile(statement: Executable, dialect: Dialect, keys: tuple[str, ...]) -> DriverForm | None:
    if not isinstance(statement, ClauseElement):
        return None
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    if not isinstance(compiled, SQLCompiler) or compiled.positiontup is None:
        return None
    if compiled.insert_prefetch or compiled.update_prefetch:
        return None  # values SQLAlchemy computes per execution (Python-side column defaults)
    names = tuple(compiled.positiontup)
    if not set(keys) <= set(names):
        return None  # a key the statement would not use: let SQLAlchemy judge it
    processors: list[Processor] = []
    fixed: dict[str, Any] = {}
    for bind_name in names:
        bind = compiled.binds[bind_name]
        if bind.expanding or bind.literal_execute or bind.callable is not None:
            return None
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        processors.append(process)
        if bind_name not in keys:
            if bind.required:
                return None
            fixed[bind_name] = bind.value if process is None else process(bind.value)
    return DriverForm(compiled.string, names, tuple(processors), fixed)


def execute_driver_rows(
    conn: Connection, form: DriverForm, params: Sequence[dict[str, Any]]
) -> int | None:
    """Run ``params`` (all with the form's keys) as one execution; the rows changed, or
    None when a row's keys differ from the form's (nothing was run)."""
    first = params[0].keys()
    if any(p.keys() != first for p in params):
        return None
    rows = [form.row(p) for p in params]
    result = conn.exec_driver_sql(form.sql, rows[0] if len(rows) == 1 else rows)
    return int(result.rowcount)
