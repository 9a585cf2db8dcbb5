"""The SQLite index of a run (any SQLAlchemy URL works, e.g. a shared Postgres): items, work
units with their status, scores, provider usage and comparisons across systems. Every write
is its own transaction, so a killed process loses only what was in flight. The schema is
versioned by alembic (``voxeval/store/migrations``, version table ``voxeval_index_version``):
opening an index written by an older version upgrades it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy import Index as SqlIndex
from sqlalchemy.engine import Connection

from voxeval.store.schema_versions import SchemaHistory, upgrade

metadata = MetaData()

items_table = Table(
    "items",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("item_id", String(500), primary_key=True),
    Column("category", String(200), nullable=False, default=""),
    Column("meta", JSON, nullable=True),
)

units_table = Table(
    "units",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("unit_key", String(1000), primary_key=True),
    Column("seq", Integer, nullable=False),  # plan order
    Column("item_id", String(500), nullable=False),
    Column("system", String(200), nullable=False),
    Column("trial", Integer, nullable=False),
    Column("condition", String(200), nullable=False),
    Column("category", String(200), nullable=False),
    Column("status", String(20), nullable=False),  # planned | running | done | failed
    Column("error", Text, nullable=True),
    # failed: the part on our side at fault (HarnessFault component, "config", "internal")
    Column("cause", String(200), nullable=True),
    # done: the system under test failed and the unit was scored as a failure (its cause)
    Column("system_fault", String(40), nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("started_at", DateTime, nullable=True),
    Column("finished_at", DateTime, nullable=True),
)

scores_table = Table(
    "scores",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("unit_key", String(1000), primary_key=True),
    Column("metric", String(200), primary_key=True),
    Column("value", Float, nullable=True),
    Column("passed", Integer, nullable=True),
    Column("error", Text, nullable=True),
    Column("details", JSON, nullable=True),
    # 1 = not scored because of a transient fault on our side; the next run/score retries it
    Column("pending", Integer, nullable=True, default=0),
    Column("scored_at", DateTime, nullable=False),
)

usage_table = Table(
    "usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(200), nullable=False, index=True),
    Column("unit_key", String(1000), nullable=False),
    Column("system", String(200), nullable=False),
    Column("provider", String(200), nullable=False),
    Column("calls", Integer, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("cost_usd", Float, nullable=True),
    Column("parse_failures", Integer, nullable=False),
    Column("recorded_at", DateTime, nullable=False),
    # HTTP requests sent (first tries and retries; cache hits send none), retries among them,
    # and timeouts; NULL in rows written before these were counted
    Column("requests", Integer, nullable=True, default=0),
    Column("retries", Integer, nullable=True, default=0),
    Column("timeouts", Integer, nullable=True, default=0),
    # audio tokens among the tokens and seconds of audio the component's models heard and
    # spoke; NULL in rows written before audio was accounted
    Column("prompt_audio_tokens", Integer, nullable=True),
    Column("completion_audio_tokens", Integer, nullable=True),
    Column("audio_in_s", Float, nullable=True),
    Column("audio_out_s", Float, nullable=True),
)

# A usage record broken down by model: what one component's calls to one (kind, provider,
# model) consumed while a unit ran or was scored. A price table multiplies these amounts
# (``voxeval costs``); the component totals stay in ``usage``.
model_usage_table = Table(
    "model_usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(200), nullable=False, index=True),
    Column("unit_key", String(1000), nullable=False),
    Column("system", String(200), nullable=False),
    Column("component", String(200), nullable=False),  # system:NAME, judge, simulator, ...
    Column("kind", String(40), nullable=False),  # asr | tts | llm | audio_llm | ... | system
    Column("provider", String(200), nullable=False),
    Column("model", String(300), nullable=False),
    Column("calls", Integer, nullable=False),
    Column("requests", Integer, nullable=False),
    Column("retries", Integer, nullable=False),
    Column("timeouts", Integer, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("prompt_audio_tokens", Integer, nullable=False),
    Column("completion_audio_tokens", Integer, nullable=False),
    Column("audio_in_s", Float, nullable=False),
    Column("audio_out_s", Float, nullable=False),
    Column("recorded_at", DateTime, nullable=False),
)

# One row per comparison step result across systems (e.g. a pairwise verdict of two units).
comparisons_table = Table(
    "comparisons",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("step", String(200), primary_key=True),
    Column("comparison_key", String(1000), primary_key=True),
    Column("unit_keys", JSON, nullable=False),  # the units it reads, in the step's order
    Column("status", String(20), nullable=False),  # done | pending | failed | not_run
    Column("result", JSON, nullable=True),
    Column("error", Text, nullable=True),
    # failed / not_run: the part at fault (a judge, an input unit that failed on our side)
    Column("cause", String(200), nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("compared_at", DateTime, nullable=False),
)


# Lookups of the run viewer's unit table (filter by system, status, category or condition
# within a run; one metric's scores across a run). Created idempotently in every index.
SqlIndex("ix_units_run_system", units_table.c.run_id, units_table.c.system, units_table.c.seq)
SqlIndex("ix_units_run_status", units_table.c.run_id, units_table.c.status)
SqlIndex("ix_units_run_category", units_table.c.run_id, units_table.c.category)
SqlIndex("ix_units_run_condition", units_table.c.run_id, units_table.c.condition)
SqlIndex("ix_units_run_seq", units_table.c.run_id, units_table.c.seq)
SqlIndex("ix_scores_run_metric", scores_table.c.run_id, scores_table.c.metric, scores_table.c.value)

RUN_INDEX_HISTORY = SchemaHistory(Path(__file__).parent / "migrations", "voxeval_index_version")


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers never block the writer and a commit is durable once its WAL frame is
    # written, so `kill -9` cannot lose a committed unit. NORMAL sync is safe under WAL
    # against process crashes (only an OS crash could drop the last transactions).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def open_engine(url: str) -> Engine:
    """Create the engine and bring the tables to this version's schema (alembic; idempotent)."""
    is_sqlite = url.startswith("sqlite")
    kwargs: dict[str, Any] = {}
    if is_sqlite:
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    engine = create_engine(url, **kwargs)
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    upgrade(engine, RUN_INDEX_HISTORY)
    return engine


class RunIndex(Protocol):
    """What the store's parts use of a run's index (``Index``; a worker's store has one
    that refuses every use: only the driver reads and writes the index)."""

    @property
    def run_id(self) -> str: ...
    def write(self) -> AbstractContextManager[Connection]: ...
    def read(self) -> Connection: ...
    def next_seq(self, conn: Connection) -> int: ...
    def dispose(self) -> None: ...


class Index:
    """Thin, thread-safe access to the tables for one run id."""

    def __init__(self, url: str, run_id: str) -> None:
        self.url = url
        self.run_id = run_id
        self.engine = open_engine(url)
        # One writer at a time: SQLite allows a single writer anyway, and serialising here
        # avoids busy-retry storms when many worker threads finish together.
        self.write_lock = threading.Lock()
        # The writers' connection, kept between transactions (under write_lock): taking one
        # from the pool and giving it back (with its reset) costs more than a small commit.
        self._writer: Connection | None = None

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One committed transaction (rolled back if the block raises)."""
        with self.write_lock:
            conn = self._writer
            if conn is None or conn.closed or conn.invalidated:
                conn = self._writer = self.engine.connect()
            try:
                with conn.begin():
                    yield conn
            except BaseException:
                if conn.invalidated:  # the database dropped it: the next write reconnects
                    self._drop_writer()
                raise

    def _drop_writer(self) -> None:
        conn, self._writer = self._writer, None
        if conn is not None:
            conn.close()

    def read(self) -> Connection:
        return self.engine.connect()

    def next_seq(self, conn: Connection) -> int:
        current = conn.execute(
            select(func.max(units_table.c.seq)).where(units_table.c.run_id == self.run_id)
        ).scalar()
        return int(current or 0) + 1

    def dispose(self) -> None:
        with self.write_lock:
            self._drop_writer()
        self.engine.dispose()
