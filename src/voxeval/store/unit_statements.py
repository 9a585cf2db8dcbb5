"""The index statements every unit runs, built once with bind parameters.

SQLAlchemy spends most of a small statement's CPU building it and computing its cache key:
an ``UPDATE ... WHERE`` built for each call costs about 180 µs on SQLite, the same statement
built once and executed with new parameters about 23 µs (``bench`` figures in
docs/runs.md). A unit runs five or six of these, so they are built here, once per process.
Parameter names carry a ``b_`` prefix: SQLAlchemy reserves the bare column names of an
UPDATE's SET clause for itself.
"""

from __future__ import annotations

from sqlalchemy import bindparam, delete, update

from voxeval.store.index import model_usage_table, scores_table, units_table, usage_table

_THIS_UNIT = (units_table.c.run_id == bindparam("b_run")) & (
    units_table.c.unit_key == bindparam("b_key")
)

# a new attempt: running, counted, with the previous attempt's outcome cleared
START_UNIT = (
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
END_UNIT = (
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

# the unit's rows of the metrics about to be stored again
DELETE_SCORES = delete(scores_table).where(
    (scores_table.c.run_id == bindparam("b_run"))
    & (scores_table.c.unit_key == bindparam("b_key"))
    & scores_table.c.metric.in_(bindparam("b_metrics", expanding=True))
)

INSERT_UNIT = units_table.insert()
INSERT_SCORES = scores_table.insert()
INSERT_USAGE = usage_table.insert()
INSERT_MODEL_USAGE = model_usage_table.insert()
