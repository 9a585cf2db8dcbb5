"""A unit's row in the index's ``units`` table, and the writes that change its status."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from sqlalchemy.engine import Connection

from voxeval.store.batched_writes import Rows
from voxeval.store.index import RunIndex, utcnow
from voxeval.store.records import UnitLike
from voxeval.store.unit_statements import END_UNIT, INSERT_UNIT

# The columns of a unit's row an update sets (status, error, cause, system_fault,
# started_at): text, or a time.
UnitValues = Mapping[str, str | datetime | None]


def unit_row(run_id: str, unit: UnitLike, seq: int, status: str) -> dict[str, str | int]:
    """The row of a unit not yet in the index (no attempt counted)."""
    return {
        "run_id": run_id,
        "unit_key": unit.key,
        "seq": seq,
        "item_id": unit.item_id,
        "system": unit.system,
        "trial": unit.trial,
        "condition": unit.condition,
        "category": unit.category,
        "status": status,
        "attempts": 0,
    }


def inserting(
    index: RunIndex, unit: UnitLike, status: str, values: UnitValues
) -> Callable[[Connection], None]:
    """What an update of ``unit``'s row does when the plan did not register the unit:
    insert it, with ``status``, ``values`` and this attempt counted."""

    def insert(conn: Connection) -> None:
        row = unit_row(index.run_id, unit, index.next_seq(conn), status)
        conn.execute(INSERT_UNIT, [{**row, **values, "attempts": 1}])

    return insert


def end_write(index: RunIndex, unit: UnitLike, status: str, values: UnitValues) -> Rows:
    """``END_UNIT`` for ``unit`` (``values``: status, error, cause, system_fault); a unit
    the plan did not register is inserted with them."""
    params = {
        "b_run": index.run_id,
        "b_key": unit.key,
        "b_status": values["status"],
        "b_error": values["error"],
        "b_cause": values["cause"],
        "b_fault": values["system_fault"],
        "b_now": utcnow(),
    }
    insert = inserting(index, unit, status, values)
    return Rows(END_UNIT, index.run_id, unit.key, [params], if_absent=insert)
