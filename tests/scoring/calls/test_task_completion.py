"""Task completion: normalisation, hashing, structured diff, auth superset check (the hash and
session rules themselves: tests/benchmarks/tools/test_db_compare.py)."""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.benchmarks.tools.db_compare import (
    TaskCompletionSettings,
    db_hash,
    diff_databases,
    normalise,
    render_diff,
    session_check,
)
from voxeval.registry import lookup
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import compare_final_state, task_completion

EXPECTED: dict[str, Any] = {
    "appointments": {
        "HT7Q2M": {
            "status": "booked",
            "start": "2026-03-19 08:30",
            "fee": 0,
            "notifications": ["a", "b"],
        }
    },
    "patients": {"KX4-92B7": {"balance": 45, "note": None}},
    "session": {"member_id": "KX4-92B7", "last_name": "lindqvist"},
}


def test_identical_state_passes() -> None:
    score = compare_final_state(EXPECTED, copy.deepcopy(EXPECTED))
    assert score.value == 1.0 and score.passed is True
    assert score.details["auth_success"] is True and score.details["auth_checked"] is True
    assert score.details["expected_hash"] == score.details["actual_hash"]
    assert "diff" not in score.details


def test_normalisation_rules() -> None:
    assert normalise(2.0) == 2 and isinstance(normalise(2.0), int)
    assert normalise(2.5) == 2.5
    assert normalise("None") is None and normalise(" null ") is None
    assert normalise("nonexistent") == "nonexistent"
    assert normalise(True) is True
    assert normalise([3, 1, 2]) == [3, 1, 2]  # a list keeps its order ...
    assert normalise({"bookings": [3, 1, 2]}) == {"bookings": [1, 2, 3]}  # ... unless order-free
    loose = TaskCompletionSettings(sort_all_lists=True)
    assert normalise([{"b": 1}, {"a": 2}], loose) == [{"a": 2}, {"b": 1}]


def test_equivalent_representations_hash_alike() -> None:
    actual = {
        "session": {"member_id": "kx4-92b7", "last_name": "LINDQVIST", "verified_at": "10:02"},
        "patients": {"KX4-92B7": {"note": "null", "balance": 45.0}},
        "appointments": {
            "HT7Q2M": {
                "notifications": ["b", "a"],
                "fee": 0.0,
                "start": "2026-03-19 08:30",
                "status": "booked",
            }
        },
    }
    score = compare_final_state(EXPECTED, actual)
    assert score.value == 1.0
    assert db_hash(EXPECTED) == db_hash(actual)


def test_mismatch_gives_structured_and_readable_diff() -> None:
    actual = copy.deepcopy(EXPECTED)
    actual["appointments"]["HT7Q2M"]["start"] = "2026-03-20 08:30"
    actual["appointments"]["ZZ0000"] = {"status": "booked"}
    del actual["patients"]["KX4-92B7"]
    actual["payments"] = {}
    score = task_completion(LiveCallRecord(expected_db=EXPECTED, final_db=actual))
    assert score.value == 0.0 and score.passed is False
    diff = score.details["diff"]
    assert diff["tables_added"] == ["payments"]
    assert diff["tables"]["appointments"]["records_added"] == ["ZZ0000"]
    assert diff["tables"]["patients"]["records_removed"] == ["KX4-92B7"]
    changed = diff["tables"]["appointments"]["records_changed"]["HT7Q2M"]
    assert changed == {"start": {"expected": "2026-03-19 08:30", "actual": "2026-03-20 08:30"}}
    text = score.details["diff_text"]
    assert "appointments[HT7Q2M].start: expected '2026-03-19 08:30', got '2026-03-20 08:30'" in text
    assert "patients[KX4-92B7]: expected record is missing" in text
    assert render_diff(diff_databases(EXPECTED, EXPECTED)) == "no differences"


def test_session_superset_check() -> None:
    assert session_check({"member_id": "AB1"}, {"member_id": "ab1", "extra": 1})["ok"]
    failed = session_check({"member_id": "AB1", "last_name": "x"}, {"member_id": "AB2"})
    assert not failed["ok"]
    assert set(failed["mismatched"]) == {"member_id", "last_name"}
    wrong_auth = copy.deepcopy(EXPECTED)
    wrong_auth["session"] = {"member_id": "KX4-92B1"}
    # the reference fails the task on a session mismatch, whatever the tables hold
    score = compare_final_state(EXPECTED, wrong_auth)
    assert score.value == 0.0
    assert score.details["db_match"] is True and score.details["auth_success"] is False
    assert score.details["session_mismatch"]["member_id"]["actual"] == "KX4-92B1"
    # opting out scores the hash alone and only reports the session
    loose = compare_final_state(EXPECTED, wrong_auth, TaskCompletionSettings(require_session=False))
    assert loose.value == 1.0 and loose.details["auth_success"] is False


def test_expected_session_not_met_fails_by_default_as_in_the_reference() -> None:
    # issue 37.1, the minimal case: same tables, the expected session never written
    expected = {"x": 1, "session": {"employee_auth": True}}
    assert compare_final_state(expected, {"x": 1}).value == 0.0
    assert compare_final_state(expected, {"x": 1, "session": None}).value == 0.0
    assert compare_final_state(expected, {"x": 1, "session": {"employee_auth": True}}).value == 1.0
    record = LiveCallRecord(expected_db=expected, final_db={"x": 1})
    assert task_completion(record).value == 0.0


def test_null_session_checks_nothing_and_does_not_crash() -> None:
    assert compare_final_state({"x": 1, "session": None}, {"x": 1}).value == 1.0
    assert compare_final_state({"x": 1, "session": None}, {"x": 1, "session": None}).value == 1.0
    assert compare_final_state({"x": 1, "session": None}, {"x": 2}).value == 0.0
    assert session_check(None, None)["ok"]


def test_no_expected_session_is_not_an_auth_check() -> None:
    tables = {k: v for k, v in EXPECTED.items() if k != "session"}
    score = compare_final_state(tables, {**copy.deepcopy(tables), "session": {"member_id": "X"}})
    assert score.value == 1.0 and score.details["auth_checked"] is False


def test_list_order_and_settings_decide_the_verdict() -> None:
    reordered = copy.deepcopy(EXPECTED)
    reordered["appointments"]["HT7Q2M"]["codes"] = ["y", "x"]
    expected = copy.deepcopy(EXPECTED)
    expected["appointments"]["HT7Q2M"]["codes"] = ["x", "y"]
    assert compare_final_state(expected, reordered).value == 0.0
    loose = TaskCompletionSettings(sort_all_lists=True)
    assert compare_final_state(expected, reordered, loose).value == 1.0
    record = LiveCallRecord(expected_db=expected, final_db=reordered, task_completion=loose)
    assert task_completion(record).value == 1.0


def test_non_table_entries_are_scored_without_crashing() -> None:
    expected = {**copy.deepcopy(EXPECTED), "_current_date": "2026-03-02", "log": [1, 2]}
    actual = {**copy.deepcopy(EXPECTED), "_current_date": "2026-03-02", "log": [2, 1]}
    score = compare_final_state(expected, actual)
    assert score.value == 0.0
    assert score.details["diff_text"] == "log[0]: expected 1, got 2\nlog[1]: expected 2, got 1"
    assert compare_final_state(expected, copy.deepcopy(expected)).value == 1.0


def test_missing_inputs_are_not_run_and_metric_is_registered() -> None:
    assert lookup("metric", "task_completion") is task_completion
    assert task_completion(LiveCallRecord(final_db={})).error
    assert task_completion(LiveCallRecord(expected_db={})).value is None


scalars = st.one_of(
    st.integers(-1000, 1000),
    st.text(alphabet="abcXYZ-_ 0123", max_size=6),
    st.booleans(),
    st.none(),
)
records = st.dictionaries(st.text(alphabet="abcdef", min_size=1, max_size=4), st.one_of(
    scalars, st.lists(st.integers(-50, 50), max_size=4)
), max_size=4)  # fmt: skip
databases = st.dictionaries(
    st.text(alphabet="tuvw", min_size=1, max_size=3),
    st.dictionaries(st.text(alphabet="KX49", min_size=1, max_size=4), records, max_size=3),
    max_size=3,
)


def _scramble(value: Any, rng: random.Random) -> Any:
    """Same content, different surface: key order shuffled, lists reversed, ints as floats
    (list order is ignored only under ``sort_all_lists``)."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _scramble(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_scramble(v, rng) for v in reversed(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@settings(max_examples=60, deadline=None)
@given(databases, st.integers(0, 10_000))
def test_hash_is_invariant_to_key_order_list_order_and_whole_floats(db: Any, seed: int) -> None:
    scrambled = _scramble(db, random.Random(seed))
    loose = TaskCompletionSettings(sort_all_lists=True)
    assert db_hash(db, loose) == db_hash(scrambled, loose)
    assert compare_final_state(db, scrambled, loose).value == 1.0


@settings(max_examples=40, deadline=None)
@given(databases)
def test_changing_a_value_changes_the_verdict(db: Any) -> None:
    changed = copy.deepcopy(db)
    changed.setdefault("t", {}).setdefault("K", {})["zz_field"] = 12345
    assert compare_final_state(db, changed).value == 0.0
