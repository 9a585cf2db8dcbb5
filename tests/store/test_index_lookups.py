"""The run index's lookup indexes (the viewer's filters): created in a new index, added to an
older one that lacks them, and never a reason for a read-only index to fail opening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from voxeval.protocols.contract import WorkUnit
from voxeval.store import RunStore
from voxeval.store.index import RUN_INDEX_HISTORY, open_engine
from voxeval.store.schema_versions import upgrade

LOOKUPS = {
    "ix_units_run_system",
    "ix_units_run_status",
    "ix_units_run_category",
    "ix_units_run_condition",
    "ix_units_run_seq",
    "ix_scores_run_metric",
}


def index_names(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}


def test_new_and_older_indexes_get_the_lookups(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.units.record_items([WorkUnit("i1", "s", 0, "clean", "c")])
    store.close()
    db = tmp_path / "run" / "index.sqlite"
    assert index_names(db) >= LOOKUPS
    with sqlite3.connect(db) as conn:  # an index written before the lookups (and alembic)
        for name in LOOKUPS:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("DROP TABLE voxeval_index_version")
    engine = open_engine(f"sqlite:///{db}")
    assert index_names(db) >= LOOKUPS
    assert upgrade(engine, RUN_INDEX_HISTORY) is False  # idempotent
    engine.dispose()
    assert [u.item_id for u in RunStore(tmp_path / "run").units.records()] == ["i1"]


def test_a_read_only_index_opens_without_them(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.close()
    db = tmp_path / "run" / "index.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("DROP INDEX ix_units_run_status")
    engine = open_engine(f"sqlite:///{db}?mode=ro&uri=true")
    assert "ix_units_run_status" not in index_names(db)
    engine.dispose()
