"""alembic versions the run index and the rater database (issue 41, point 5): a database
created by the code before alembic (tables from ``create_all``, older ones lacking columns
added since) is upgraded and stamped when opened, its rows kept, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from voxeval.raters.database import RATER_DB_HISTORY, open_database
from voxeval.raters.schema import metadata as rater_metadata
from voxeval.store.index import RUN_INDEX_HISTORY, metadata, open_engine
from voxeval.store.schema_versions import current_revision, head_revision

# Columns an index written before they were counted lacks (added by ALTER TABLE before).
LATER_COLUMNS = {
    "scores": ["pending"],
    "usage": ["requests", "retries", "timeouts", "prompt_audio_tokens", "audio_out_s"],
    "units": ["system_fault"],
}


def pre_alembic_index(url: str) -> None:
    """An index as the old code wrote it, minus the columns added later, with one row."""
    engine = sa.create_engine(url)
    metadata.create_all(engine)
    with engine.begin() as conn:
        for table, columns in LATER_COLUMNS.items():
            for column in columns:
                conn.execute(sa.text(f'ALTER TABLE "{table}" DROP COLUMN "{column}"'))
        conn.execute(
            sa.text(
                "INSERT INTO usage (run_id, unit_key, system, provider, calls, prompt_tokens,"
                " completion_tokens, parse_failures, recorded_at) VALUES"
                " ('r', 'u', 's', 'p', 3, 10, 5, 0, :t)"
            ),
            {"t": datetime(2026, 1, 1)},
        )
    engine.dispose()


def columns(engine: sa.Engine, table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(engine).get_columns(table)}


def check_index_upgrade(url: str) -> None:
    pre_alembic_index(url)
    engine = open_engine(url)
    try:
        assert current_revision(engine, RUN_INDEX_HISTORY) == head_revision(RUN_INDEX_HISTORY)
        for table, added in LATER_COLUMNS.items():
            assert set(added) <= columns(engine, table)
        with engine.connect() as conn:
            row = conn.execute(sa.text("SELECT calls, requests FROM usage")).one()
        assert tuple(row) == (3, None)  # the old row kept, the new column NULL
        names = {ix["name"] for ix in sa.inspect(engine).get_indexes("units")}
        assert "ix_units_run_status" in names
    finally:
        engine.dispose()
    again = open_engine(url)  # a second open finds it current and changes nothing
    assert current_revision(again, RUN_INDEX_HISTORY) == "0001"
    again.dispose()


def test_sqlite_index_from_before_alembic_is_upgraded(tmp_path: Path) -> None:
    check_index_upgrade(f"sqlite:///{tmp_path / 'index.sqlite'}")


@pytest.mark.postgres
def test_postgres_index_from_before_alembic_is_upgraded(postgres_url: str) -> None:
    check_index_upgrade(postgres_url)


def check_rater_upgrade(url: str) -> None:
    engine = sa.create_engine(url)
    rater_metadata.create_all(engine)  # what open_database did before alembic
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO rater_studies (study_id, task, config, created_at)"
                " VALUES ('s1', 'score', '{}', :t)"
            ),
            {"t": datetime(2026, 1, 1)},
        )
    engine.dispose()
    opened = open_database(url)
    try:
        assert current_revision(opened, RATER_DB_HISTORY) == head_revision(RATER_DB_HISTORY)
        with opened.connect() as conn:
            assert conn.execute(sa.text("SELECT study_id FROM rater_studies")).scalar() == "s1"
    finally:
        opened.dispose()


def test_sqlite_rater_database_from_before_alembic_is_stamped(tmp_path: Path) -> None:
    check_rater_upgrade(f"sqlite:///{tmp_path / 'study.db'}")


@pytest.mark.postgres
def test_postgres_rater_database_and_index_share_one_database(postgres_url: str) -> None:
    check_rater_upgrade(postgres_url)
    check_index_upgrade(postgres_url)  # its own version table: both stay at their heads
    engine = sa.create_engine(postgres_url)
    assert current_revision(engine, RATER_DB_HISTORY) == "0001"
    engine.dispose()
