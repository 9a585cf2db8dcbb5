"""Task completion (EVA-A): did the call leave the database in the expected state?

Binary: the SHA-256 of the normalised canonical database (``session`` removed) must equal the
expected one, and the expected auth ``session`` must be a subset of the actual session."""

from __future__ import annotations

from typing import Any

from voxeval.benchmarks.tools.db_compare import (
    SESSION_KEY,
    db_hash,
    diff_databases,
    diff_is_empty,
    render_diff,
    session_check,
)
from voxeval.registry import register
from voxeval.scoring.live_call_record import LiveCallRecord
from voxeval.scoring.score import Score


def compare_final_state(expected_db: dict[str, Any], final_db: dict[str, Any]) -> Score:
    """Score a final database against the expected one (both may carry ``session``)."""
    expected_hash, actual_hash = db_hash(expected_db), db_hash(final_db)
    auth = session_check(expected_db.get(SESSION_KEY) or {}, final_db.get(SESSION_KEY) or {})
    diff = diff_databases(expected_db, final_db)
    db_match = expected_hash == actual_hash
    passed = db_match and auth["ok"]
    details: dict[str, Any] = {
        "auth_success": auth["ok"],
        "db_match": db_match,
        "expected_hash": expected_hash,
        "actual_hash": actual_hash,
    }
    if not auth["ok"]:
        details["session_mismatch"] = auth["mismatched"]
    if not diff_is_empty(diff):
        details["diff"] = diff
        details["diff_text"] = render_diff(diff)
    return Score(value=1.0 if passed else 0.0, passed=passed, details=details)


@register("metric", "task_completion")
def task_completion(record: LiveCallRecord, resources: object = None) -> Score:
    if record.expected_db is None:
        return Score.not_run("no expected database for this call")
    if record.final_db is None:
        return Score.not_run("the call left no final database")
    return compare_final_state(record.expected_db, record.final_db)
