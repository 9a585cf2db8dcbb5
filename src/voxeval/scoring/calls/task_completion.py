"""Task completion (EVA-A): did the call leave the database in the expected state?

Binary, as in the EVA-Bench reference: first every key of the expected ``session`` must hold
its value in the final session (strings compared case-insensitively; a null or absent
expected session checks nothing), else the call scores 0 whatever the tables hold; then the
SHA-256 of the normalised database (``session`` removed) must equal the expected one
(``voxeval.benchmarks.tools.db_compare``: the reference hash under the default settings; a
suite may change which lists are order-free). A suite that sets ``task_completion:
{require_session: false}`` scores the hash alone and only reports the session."""

from __future__ import annotations

from typing import Any

from voxeval.benchmarks.tools.database import Database
from voxeval.benchmarks.tools.db_compare import (
    REFERENCE_SETTINGS,
    SESSION_KEY,
    TaskCompletionSettings,
    db_hash,
    diff_databases,
    diff_is_empty,
    render_diff,
    session_check,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

COMPLETED = 1.0  # the value of a completed task (0.0 otherwise); EVA-A requires it


def compare_final_state(
    expected_db: Database,
    final_db: Database,
    settings: TaskCompletionSettings = REFERENCE_SETTINGS,
) -> Score:
    """Score a final database against the expected one (both may carry ``session``).

    ``auth_checked`` is False when the scenario expects no session: nothing to check, and
    ``auth_success`` is then True only in the sense that no check failed."""
    expected_hash, actual_hash = db_hash(expected_db, settings), db_hash(final_db, settings)
    expected_session = expected_db.get(SESSION_KEY) or {}
    auth = session_check(expected_session, final_db.get(SESSION_KEY))
    diff = diff_databases(expected_db, final_db, settings)
    db_match = expected_hash == actual_hash
    # the reference returns 0 on a session mismatch before it compares hashes
    passed = db_match and (auth["ok"] or not settings.require_session)
    details: dict[str, Any] = {
        "auth_success": auth["ok"],
        "auth_checked": bool(expected_session),
        "db_match": db_match,
        "expected_hash": expected_hash,
        "actual_hash": actual_hash,
    }
    if not auth["ok"]:
        details["session_mismatch"] = auth["mismatched"]
    if not diff_is_empty(diff):
        details["diff"] = diff
        details["diff_text"] = render_diff(diff)
    return Score(value=COMPLETED if passed else 0.0, passed=passed, details=details)


@metric(
    "task_completion",
    better="higher",
    failure=FailureValue(0.0, False, "the task is not completed", always=True),
    protocols=("live_call",),
)
def task_completion(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    if record.expected_db is None:
        return Score.not_run("no expected database for this call")
    if record.final_db is None:
        return Score.not_run("the call left no final database")
    return compare_final_state(record.expected_db, record.final_db, record.task_completion)
