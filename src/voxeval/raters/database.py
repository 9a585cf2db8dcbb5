"""Open the rater database (a SQLite file beside the study by default, PostgreSQL by URL),
create or upgrade its tables and copy the study folder into it.

SQLite runs in WAL mode with a busy timeout, and every transaction starts with
``BEGIN IMMEDIATE``: concurrent raters then queue for the write lock instead of failing
with a stale snapshot halfway through "read the counts, insert the assignment"."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, create_engine, event, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

from voxeval.errors import ConfigError
from voxeval.raters.schema import items_table, studies_table
from voxeval.raters.study.study_files import DEFAULT_DB, STUDY_FILE, StudyConfig, StudyItem
from voxeval.store.schema_versions import SchemaHistory, upgrade

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy.pool import ConnectionPoolEntry

T = TypeVar("T")
RATER_DB_HISTORY = SchemaHistory(Path(__file__).parent / "migrations", "voxeval_raters_version")
_LOCK_RETRIES = 8


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def database_url(study_dir: Path, db: str | None) -> str:
    """The SQLAlchemy URL: ``db`` as given (``postgresql://`` uses psycopg), else
    ``STUDY_DIR/study.db``."""
    if not db:
        return f"sqlite:///{(study_dir / DEFAULT_DB).resolve()}"
    for prefix in ("postgresql://", "postgres://"):
        if db.startswith(prefix):
            return "postgresql+psycopg://" + db[len(prefix) :]
    if "://" not in db:  # a plain file path
        return f"sqlite:///{Path(db).resolve()}"
    return db


def _sqlite_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
    # The driver's own transaction handling is switched off so that the "begin" hook
    # below decides how each transaction starts.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA journal_mode=WAL")
    # NORMAL is durable against a killed process under WAL (only an OS crash could drop
    # the last commits).
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def open_database(url: str) -> Engine:
    """An engine for ``url`` with the rater tables at this version's schema (alembic's
    ``voxeval/raters/migrations``, version table ``voxeval_raters_version``; idempotent)."""
    is_sqlite = url.startswith("sqlite")
    kwargs: dict[str, Any] = {}
    if is_sqlite:
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    else:
        kwargs["pool_pre_ping"] = True
        kwargs["pool_size"] = 10
        kwargs["max_overflow"] = 40
    try:
        engine = create_engine(url, **kwargs)
    except Exception as exc:  # bad URL or missing driver: say which
        raise ConfigError(f"--db {url.split('@')[-1]}: cannot open ({exc})") from exc
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    upgrade(engine, RATER_DB_HISTORY)
    return engine


def retrying(work: Callable[[], T]) -> T:
    """Run ``work`` again when the database reports a lock or serialisation conflict."""
    for attempt in range(_LOCK_RETRIES):
        try:
            return work()
        except OperationalError:
            if attempt == _LOCK_RETRIES - 1:
                raise
            time.sleep(0.02 * (attempt + 1))
    raise AssertionError("unreachable")


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """One committed transaction (``BEGIN IMMEDIATE`` on SQLite)."""
    with engine.begin() as conn:
        yield conn


def sync_study(
    engine: Engine, study_dir: Path, config: StudyConfig, items: list[StudyItem]
) -> dict[str, int]:
    """Copy study.yaml and items.jsonl into the database. Idempotent; new items are added,
    edited ones updated, and items gone from the file get a target of 0 (never issued again,
    their answers kept). A study whose task changed is refused. Returns counts."""
    counts = {"added": 0, "updated": 0, "retired": 0}

    def work() -> None:
        counts.update(added=0, updated=0, retired=0)
        with transaction(engine) as conn:
            row = conn.execute(
                select(studies_table.c.task).where(studies_table.c.study_id == config.study_id)
            ).first()
            config_json = config.model_dump(mode="json")
            if row is None:
                conn.execute(
                    insert(studies_table).values(
                        study_id=config.study_id,
                        task=config.task,
                        config=config_json,
                        created_at=utcnow(),
                    )
                )
            elif row.task != config.task:
                raise ConfigError(
                    f"{study_dir / STUDY_FILE}: field 'task': the database already holds study "
                    f"{config.study_id!r} as task {row.task!r}, not {config.task!r} "
                    "(give the study a new study_id or use another --db)"
                )
            else:
                conn.execute(
                    update(studies_table)
                    .where(studies_table.c.study_id == config.study_id)
                    .values(config=config_json)
                )
            existing = {
                r.item_id: r
                for r in conn.execute(
                    select(items_table).where(items_table.c.study_id == config.study_id)
                )
            }
            wanted = {item.item_id for item in items}
            for item in items:
                values = {
                    "kind": item.kind,
                    "target_raters": config.raters_per_item,
                    "payload": item.model_dump(mode="json"),
                }
                old = existing.get(item.item_id)
                if old is None:
                    conn.execute(
                        insert(items_table).values(
                            study_id=config.study_id, item_id=item.item_id, **values
                        )
                    )
                    counts["added"] += 1
                elif (old.kind, old.target_raters, old.payload) != tuple(values.values()):
                    conn.execute(
                        update(items_table)
                        .where(items_table.c.study_id == config.study_id)
                        .where(items_table.c.item_id == item.item_id)
                        .values(**values)
                    )
                    counts["updated"] += 1
            for item_id, old in existing.items():
                if item_id not in wanted and old.target_raters != 0:
                    conn.execute(
                        update(items_table)
                        .where(items_table.c.study_id == config.study_id)
                        .where(items_table.c.item_id == item_id)
                        .values(target_raters=0)
                    )
                    counts["retired"] += 1

    retrying(work)
    return counts
