"""Schema versions of voxeval's databases (the run index, the rater database), kept by alembic.

Each database has its own alembic script folder (``voxeval/store/migrations``,
``voxeval/raters/migrations``) and its own version table, so both can share one PostgreSQL
database. Opening a database upgrades it to the newest revision; one SELECT of the version
table is all an up-to-date database costs. The first revision of each folder is a baseline:
it creates the tables of a new database and completes one written before alembic was used
(the columns and indexes added since it was created), then stamps it.

A new column or table is a new revision file in the folder (``alembic revision`` with
``script_location`` pointing there, or by hand: an ``upgrade()`` using ``alembic.op``), plus the
matching change to the live table definitions.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path

from alembic import command, op
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, inspect
from sqlalchemy.exc import DBAPIError

_ATTEMPTS = 5


@dataclass(frozen=True)
class SchemaHistory:
    """One database's alembic script folder and the table holding its current revision."""

    script_location: Path
    version_table: str

    def config(self) -> Config:
        config = Config()
        config.set_main_option("script_location", str(self.script_location))
        config.attributes["version_table"] = self.version_table
        return config


@functools.cache
def head_revision(history: SchemaHistory) -> str | None:
    """The newest revision of ``history`` (read from its folder once per process)."""
    return ScriptDirectory.from_config(history.config()).get_current_head()


def current_revision(engine: Engine, history: SchemaHistory) -> str | None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": history.version_table})
        return context.get_current_revision()


def upgrade(engine: Engine, history: SchemaHistory) -> bool:
    """Bring the database of ``engine`` to the newest revision of ``history``. Returns whether
    a migration ran. Processes opening the same database at once may race; the loser sees the
    winner's tables or version and looks again. A read-only database written before alembic
    was used, whose tables are all there, is opened as it is (it cannot be stamped)."""
    head = head_revision(history)
    for attempt in range(_ATTEMPTS):
        if current_revision(engine, history) == head:
            return False
        config = history.config()
        try:
            with engine.begin() as conn:
                config.attributes["connection"] = conn
                command.upgrade(config, "head")
            return True
        except DBAPIError as exc:
            if _read_only(exc) and not missing_tables(engine, history):
                return False
            if attempt == _ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    return False


def _read_only(exc: DBAPIError) -> bool:
    message = str(exc.orig).lower()
    return "readonly" in message or "read-only" in message or "read only" in message


def missing_tables(engine: Engine, history: SchemaHistory) -> list[str]:
    """Tables the baseline defines that the database lacks."""
    baseline = ScriptDirectory.from_config(history.config()).get_revision("0001")
    schema: MetaData = baseline.module.SCHEMA
    present = set(inspect(engine).get_table_names())
    return [name for name in schema.tables if name not in present]


def create_or_complete(schema: MetaData) -> None:
    """A baseline revision's upgrade: create the tables of ``schema`` a database lacks, and
    add to existing ones the columns and indexes they lack (nullable columns only, so rows
    written before stay valid). Runs inside alembic's migration context."""
    bind = op.get_bind()
    found = inspect(bind)
    for table in schema.sorted_tables:
        if not found.has_table(table.name):
            table.create(bind)  # with its indexes
            continue
        columns = {c["name"] for c in found.get_columns(table.name)}
        for column in table.columns:
            if column.name not in columns:
                op.add_column(table.name, column._copy())
        indexes = {ix["name"] for ix in found.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in indexes:
                index.create(bind)
