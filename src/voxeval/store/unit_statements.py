"""The index statements every unit runs, built once with bind parameters.

SQLAlchemy spends most of a small statement's CPU building it and computing its cache key:
an ``UPDATE ... WHERE`` built for each call costs about 180 µs on SQLite, the same statement
built once and executed with new parameters about 23 µs (``bench`` figures in
docs/runs.md). A unit runs six to ten of these, so they are built here, once per process,
and the rows of units that commit together run as one ``executemany`` per statement
(``batched_writes``; ``phase``: the order of one unit's writes). Parameter names carry a
``b_`` prefix: SQLAlchemy reserves the bare column names of an UPDATE's SET clause for itself.
"""

from __future__ import annotations

from sqlalchemy import bindparam, delete, update

from voxeval.store.batched_writes import SharedStatement
from voxeval.store.index import model_usage_table, scores_table, units_table, usage_table

_THIS_UNIT = (units_table.c.run_id == bindparam("b_run")) & (
    units_table.c.unit_key == bindparam("b_key")
)

# a new attempt: running, counted, with the previous attempt's outcome cleared
_START_UNIT = (
    update(units_table)
    .where(_THIS_UNIT)
    .values(
        status="running",
        error=None,
        cause=None,
        system_fault=None,
        attempts=units_table.c.attempts + 1,
        started_at=bindparam("b_now"),
        finished_at=None,
    )
)

# the attempt's outcome: done (scored; ``b_fault`` when the system failed) or failed
_END_UNIT = (
    update(units_table)
    .where(_THIS_UNIT)
    .values(
        status=bindparam("b_status"),
        error=bindparam("b_error"),
        cause=bindparam("b_cause"),
        system_fault=bindparam("b_fault"),
        finished_at=bindparam("b_now"),
    )
)

# the unit's row of a metric about to be stored again (one row of parameters per metric)
_DELETE_SCORE = delete(scores_table).where(
    (scores_table.c.run_id == bindparam("b_run"))
    & (scores_table.c.unit_key == bindparam("b_key"))
    & (scores_table.c.metric == bindparam("b_metric"))
)

INSERT_UNIT = units_table.insert()

START_UNIT = SharedStatement("start_unit", _START_UNIT, phase=0, updates_unit=True)
# A unit's usage and model usage rows are inserts of their own, which no other write of the
# unit reads: one phase, so the rows a unit records component by component (usage, models,
# usage, models) stay one execution per statement instead of starting a group each time.
INSERT_USAGE = SharedStatement("insert_usage", usage_table.insert(), phase=1)
INSERT_MODEL_USAGE = SharedStatement("insert_model_usage", model_usage_table.insert(), phase=1)
DELETE_SCORE = SharedStatement("delete_score", _DELETE_SCORE, phase=2)
INSERT_SCORES = SharedStatement("insert_scores", scores_table.insert(), phase=3)
END_UNIT = SharedStatement("end_unit", _END_UNIT, phase=4, updates_unit=True)
