"""Database hash, diff and session check with the EVA-Bench reference semantics."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from pydantic import ValidationError

from voxeval.benchmarks.tools.db_compare import (
    REFERENCE_ORDER_FREE_LISTS,
    TaskCompletionSettings,
    db_hash,
    diff_databases,
    diff_is_empty,
    normalise,
    render_diff,
    session_check,
)

# A hand-made database touching every normalisation rule.
GOLDEN_DB: dict[str, Any] = {
    "_current_date": "2026-03-02",
    "customers": {
        "C-1": {
            "name": "Zoë Ångström-Nuñez",
            "balance": 120.0,
            "rate": 0.25,
            "middle_name": "None",
            "suffix": " NULL ",
            "bookings": ["BK2", "BK1"],  # order-free: sorted
            "legs": ["LHR", "CDG"],  # ordered: kept
            "history": [{"notifications": [{"id": 2.0}, {"id": 1}]}, {"step": "z"}],
        }
    },
    "error_injections": [{"tool": "b", "times": 1.0}, {"tool": "a", "times": 2}],
    "session": {"customer_id": "C-1"},
}
# The same database normalised by hand, written out literally.
GOLDEN_NORMALISED: dict[str, Any] = {
    "_current_date": "2026-03-02",
    "customers": {
        "C-1": {
            "name": "Zoë Ångström-Nuñez",
            "balance": 120,
            "rate": 0.25,
            "middle_name": None,
            "suffix": None,
            "bookings": ["BK1", "BK2"],
            "legs": ["LHR", "CDG"],
            "history": [{"notifications": [{"id": 1}, {"id": 2}]}, {"step": "z"}],
        }
    },
    "error_injections": [{"tool": "b", "times": 1}, {"tool": "a", "times": 2}],
}
GOLDEN_DIGEST = "0d5f1ee7465e6c114a26b50adee209e50b4bb892760d07441ac15c18d1cd8c4c"


def _reference_digest(normalised: dict[str, Any]) -> str:
    # the reference formula, written out: json.dumps defaults (ensure_ascii=True) + SHA-256
    text = json.dumps(normalised, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_golden_hash_equals_the_reference_formula() -> None:
    assert normalise({k: v for k, v in GOLDEN_DB.items() if k != "session"}) == GOLDEN_NORMALISED
    assert db_hash(GOLDEN_DB) == _reference_digest(GOLDEN_NORMALISED)
    assert db_hash(GOLDEN_DB) == GOLDEN_DIGEST


def test_non_ascii_text_is_hashed_with_ascii_escapes() -> None:
    db = {"t": {"r": {"name": "Zoë"}}}
    escaped = '{"t":{"r":{"name":"Zo\\u00eb"}}}'
    assert db_hash(db) == hashlib.sha256(escaped.encode()).hexdigest()


def test_reference_order_free_set() -> None:
    assert set(REFERENCE_ORDER_FREE_LISTS) == {
        "standby_list", "notifications", "bookings", "system_accounts", "group_memberships",
        "asset_recoveries",
    }  # fmt: skip
    assert TaskCompletionSettings().order_free_lists == REFERENCE_ORDER_FREE_LISTS
    assert TaskCompletionSettings().sort_all_lists is False


def _flight(standby: list[str], seats: list[str]) -> dict[str, Any]:
    return {"flights": {"F1": {"standby_list": standby, "seats": seats}}}


def test_list_order_matters_only_in_declared_fields() -> None:
    base = _flight(["p1", "p2"], ["1A", "1B"])
    assert db_hash(base) == db_hash(_flight(["p2", "p1"], ["1A", "1B"]))  # declared
    assert db_hash(base) != db_hash(_flight(["p1", "p2"], ["1B", "1A"]))  # undeclared
    diff = diff_databases(base, _flight(["p2", "p1"], ["1B", "1A"]))
    assert diff["tables"]["flights"]["records_changed"]["F1"] == {
        "seats": {"expected": ["1A", "1B"], "actual": ["1B", "1A"]}
    }


def test_list_order_rules_apply_at_any_depth() -> None:
    def db(notes: list[int], steps: list[str]) -> dict[str, Any]:
        inner = {"notifications": notes, "steps": steps}
        return {"t": {"r": {"log": [inner, {"x": 1}], "meta": {"deep": inner}}}}

    assert db_hash(db([1, 2], ["a", "b"])) == db_hash(db([2, 1], ["a", "b"]))
    assert db_hash(db([1, 2], ["a", "b"])) != db_hash(db([1, 2], ["b", "a"]))
    # the outer list ``log`` is not declared: its own order counts
    inner = {"notifications": [1, 2], "steps": ["a", "b"]}
    reordered = {"t": {"r": {"log": [{"x": 1}, inner], "meta": {"deep": inner}}}}
    assert db_hash(db([1, 2], ["a", "b"])) != db_hash(reordered)


def test_sort_all_lists_option_restores_the_order_free_rule() -> None:
    loose = TaskCompletionSettings(sort_all_lists=True)
    a, b = _flight(["p1"], ["1A", "1B"]), _flight(["p1"], ["1B", "1A"])
    assert db_hash(a) != db_hash(b)
    assert db_hash(a, loose) == db_hash(b, loose)
    assert diff_is_empty(diff_databases(a, b, loose))
    assert normalise([3, 1, 2], loose) == [1, 2, 3] and normalise([3, 1, 2]) == [3, 1, 2]


def test_custom_order_free_fields() -> None:
    custom = TaskCompletionSettings(order_free_lists=("seats",))
    a, b = _flight(["p1", "p2"], ["1A", "1B"]), _flight(["p2", "p1"], ["1B", "1A"])
    assert db_hash(_flight(["p1"], ["1A", "1B"]), custom) == db_hash(
        _flight(["p1"], ["1B", "1A"]), custom
    )
    assert db_hash(a, custom) != db_hash(b, custom)  # standby_list is ordered now
    with pytest.raises(ValidationError):
        TaskCompletionSettings.model_validate({"order_free": ["x"]})


def test_whole_floats_and_null_strings() -> None:
    assert db_hash({"t": {"r": {"n": 3.0}}}) == db_hash({"t": {"r": {"n": 3}}})
    assert db_hash({"t": {"r": {"n": 3.5}}}) != db_hash({"t": {"r": {"n": 3}}})
    for text in ("None", " NULL ", "null", "none"):
        assert db_hash({"t": {"r": {"x": text}}}) == db_hash({"t": {"r": {"x": None}}})
    assert db_hash({"t": {"r": {"x": "nobody"}}}) != db_hash({"t": {"r": {"x": None}}})
    assert normalise(float("inf")) == float("inf") and normalise(True) is True


def test_session_expected_null_matches_an_absent_key() -> None:
    assert session_check({"member_id": "A1", "pin": None}, {"member_id": "a1"})["ok"]
    assert session_check({"pin": None}, {"pin": None})["ok"]
    assert not session_check({"pin": None}, {"pin": "1234"})["ok"]


def test_session_none_string_is_a_string_not_null() -> None:
    for same in ("None", "none", "NONE"):
        assert session_check({"tier": "None"}, {"tier": same})["ok"]
    for other in ({"tier": None}, {}, {"tier": "null"}):
        check = session_check({"tier": "None"}, other)
        assert not check["ok"]
        assert check["mismatched"]["tier"] == {"expected": "None", "actual": other.get("tier")}


def test_session_values_case_insensitive_and_extra_keys_allowed() -> None:
    check = session_check({"last_name": "lindqvist"}, {"last_name": "LINDQVIST", "x": 1})
    assert check == {"ok": True, "mismatched": {}}
    assert not session_check({"member_id": "AB1"}, {"member_id": "AB2"})["ok"]
    assert session_check({"attempts": 2}, {"attempts": 2.0})["ok"]


def test_non_table_keys_are_hashed_and_diffed() -> None:
    expected = {"_current_date": "2026-03-02", "t": {"r": {"v": 1}}}
    actual = {"_current_date": "2026-03-03", "t": {"r": {"v": 1}}}
    assert db_hash(expected) != db_hash(actual)
    diff = diff_databases(expected, actual)
    assert diff["values"] == {"_current_date": {"expected": "2026-03-02", "actual": "2026-03-03"}}
    assert render_diff(diff) == "_current_date: expected '2026-03-02', got '2026-03-03'"
    assert diff_is_empty(diff_databases(expected, copy.deepcopy(expected)))
    # a record table on one side and a plain value on the other: a changed value
    changed = diff_databases({"t": {"r": {}}}, {"t": "gone"})
    assert changed["values"]["t"] == {"expected": {"r": {}}, "actual": "gone"}


def test_list_tables_are_diffed_element_wise() -> None:
    expected = {"error_injections": [{"tool": "a"}, {"tool": "b"}], "t": {}}
    actual = {"error_injections": [{"tool": "a"}, {"tool": "c"}, {"tool": "d"}], "t": {}}
    diff = diff_databases(expected, actual)
    assert diff["lists"]["error_injections"] == [
        {"index": 1, "expected": {"tool": "b"}, "actual": {"tool": "c"}},
        {"index": 2, "expected": "<missing>", "actual": {"tool": "d"}},
    ]
    assert render_diff(diff).splitlines() == [
        "error_injections[1]: expected {'tool': 'b'}, got {'tool': 'c'}",
        "error_injections[2]: expected '<missing>', got {'tool': 'd'}",
    ]
    assert db_hash(expected) != db_hash(actual)
