"""The index keeps one connection for its writes: reused between transactions, rolled back
with a failed block, and replaced when the database drops it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from voxeval.store.group_commit import GroupCommitter
from voxeval.store.index import Index, units_table, utcnow


def _unit_row(index: Index, key: str) -> dict[str, object]:
    return {
        "run_id": index.run_id,
        "unit_key": key,
        "item_id": key,
        "system": "s",
        "trial": 0,
        "condition": "clean",
        "category": "c",
        "status": "done",
        "attempts": 1,
        "seq": 1,
        "started_at": utcnow(),
    }


def _stored_keys(index: Index) -> list[str]:
    with index.read() as conn:
        rows = conn.execute(
            units_table.select().where(units_table.c.run_id == index.run_id)
        ).mappings()
        return sorted(str(row["unit_key"]) for row in rows)


def test_writes_share_one_connection_and_a_failed_block_rolls_back(tmp_path: Path) -> None:
    index = Index(f"sqlite:///{tmp_path / 'index.sqlite'}", "run")
    with index.write() as first:
        first.execute(units_table.insert(), [_unit_row(index, "a")])
    with pytest.raises(RuntimeError, match="boom"), index.write() as second:
        second.execute(units_table.insert(), [_unit_row(index, "b")])
        raise RuntimeError("boom")
    with index.write() as third:
        third.execute(units_table.insert(), [_unit_row(index, "c")])
    assert first is second is third  # no pool round trip per transaction
    assert _stored_keys(index) == ["a", "c"]
    index.dispose()
    with index.write() as after:  # a disposed index opens a new connection when written
        assert after is not first
        after.execute(units_table.insert(), [_unit_row(index, "d")])
    assert _stored_keys(index) == ["a", "c", "d"]
    index.dispose()


@pytest.mark.postgres  # asks for postgres_url at run time
def test_a_connection_the_server_dropped_is_replaced(request: pytest.FixtureRequest) -> None:
    url = str(request.getfixturevalue("postgres_url"))
    index = Index(url, "run-dropped")
    committer = GroupCommitter(index)
    committer.submit(lambda conn: conn.execute(units_table.insert(), [_unit_row(index, "a")]))
    with index.write() as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    admin = create_engine(url)
    with admin.begin() as other:  # the server ends the writer's session
        assert other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar_one()
    admin.dispose()
    with pytest.raises(DBAPIError), index.write() as dead:
        dead.execute(units_table.insert(), [_unit_row(index, "lost")])
    # the next write (a unit completing) reconnects and commits
    committer.submit(lambda conn: conn.execute(units_table.insert(), [_unit_row(index, "b")]))
    assert _stored_keys(index) == ["a", "b"]
    index.dispose()
