"""Reading a study's database for quality control and export (the serving app owns writing).

``--db`` takes any SQLAlchemy URL; ``postgresql://`` is read with psycopg. The default is the
SQLite file ``study.db`` in the study folder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Engine, create_engine, select

from voxeval.errors import ConfigError
from voxeval.raters.database import as_utc
from voxeval.raters.schema import accounts_table, items_table, responses_table
from voxeval.raters.study.study_files import DEFAULT_DB, StudyItem


def database_url(study_dir: Path, db: str | None) -> str:
    """``db`` with the psycopg driver named for PostgreSQL; default ``sqlite:///study.db``."""
    if not db:
        path = study_dir / DEFAULT_DB
        if not path.is_file():
            raise ConfigError(f"{path}: no study database (serve the study, or pass --db URL)")
        return f"sqlite:///{path.resolve()}"
    for plain in ("postgresql://", "postgres://"):
        if db.startswith(plain):
            return "postgresql+psycopg://" + db[len(plain) :]
    return db


def open_study_engine(url: str) -> Engine:
    return create_engine(url, future=True)


@dataclass(frozen=True)
class ResponseRow:
    response_id: int
    item_id: str
    rater_id: str
    task: str
    answer: dict[str, Any]
    seconds_on_page: float
    submitted_at: datetime
    gold_correct: bool | None


def load_responses(engine: Engine, study_id: str) -> list[ResponseRow]:
    """Every accepted response of the study, in the order they were committed."""
    table = responses_table
    query = (
        select(table)
        .where(table.c.study_id == study_id)
        .order_by(table.c.submitted_at, table.c.response_id)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
    return [
        ResponseRow(
            response_id=int(r["response_id"]),
            item_id=str(r["item_id"]),
            rater_id=str(r["rater_id"]),
            task=str(r["task"]),
            answer=dict(r["answer"] or {}),
            seconds_on_page=float(r["seconds_on_page"]),
            # SQLite hands back naive times, PostgreSQL its session's zone: UTC for both
            submitted_at=as_utc(r["submitted_at"]),
            gold_correct=r["gold_correct"],
        )
        for r in rows
    ]


def load_items(engine: Engine, study_id: str) -> dict[str, StudyItem]:
    """The study's items as the database holds them (``payload`` is the items.jsonl line)."""
    query = select(items_table).where(items_table.c.study_id == study_id)
    with engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
    items = {}
    for row in rows:
        try:
            items[str(row["item_id"])] = StudyItem.model_validate(row["payload"])
        except ValidationError as exc:
            raise ConfigError(
                f"database table {items_table.name}: item {row['item_id']!r}: field payload: "
                f"{exc.errors()[0]['msg']}"
            ) from exc
    return items


def load_raters(engine: Engine, study_id: str) -> list[str]:
    """Ids of the study's rater accounts (admins excluded)."""
    table = accounts_table
    query = select(table.c.rater_id).where(
        (table.c.study_id == study_id) & (table.c.role == "rater")
    )
    with engine.connect() as conn:
        return sorted(str(r) for r in conn.execute(query).scalars())
