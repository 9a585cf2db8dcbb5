"""Canonical form, hashing and structured diffs of scenario databases (task completion)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

SESSION_KEY = "session"
_NULL_STRINGS = {"none", "null"}


def normalise(value: Any) -> Any:
    """Whole floats -> int, strings "none"/"null" -> None, lists sorted (order-independent),
    mappings normalised recursively (keys as strings)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, str):
        return None if value.strip().lower() in _NULL_STRINGS else value
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [normalise(v) for v in value]
        return sorted(items, key=canonical_json)
    return value


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def without_session(db: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in db.items() if k != SESSION_KEY}


def db_hash(db: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the normalised database without ``session``."""
    return hashlib.sha256(canonical_json(normalise(without_session(db))).encode()).hexdigest()


def diff_databases(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """Structured diff of two normalised databases (session excluded)::

    {"tables_added": [...], "tables_removed": [...],
     "tables": {table: {"records_added": [...], "records_removed": [...],
                        "records_changed": {key: {field: {"expected", "actual"}}}}}}
    """
    exp = normalise(without_session(expected))
    act = normalise(without_session(actual))
    out: dict[str, Any] = {
        "tables_added": sorted(set(act) - set(exp)),
        "tables_removed": sorted(set(exp) - set(act)),
        "tables": {},
    }
    for table in sorted(set(exp) & set(act)):
        e_rows, a_rows = exp[table] or {}, act[table] or {}
        changed: dict[str, Any] = {}
        for key in sorted(set(e_rows) & set(a_rows)):
            fields = _field_diff(e_rows[key], a_rows[key])
            if fields:
                changed[key] = fields
        added, removed = sorted(set(a_rows) - set(e_rows)), sorted(set(e_rows) - set(a_rows))
        if added or removed or changed:
            out["tables"][table] = {
                "records_added": added,
                "records_removed": removed,
                "records_changed": changed,
            }
    return out


def _field_diff(expected: Any, actual: Any) -> dict[str, Any]:
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return {} if expected == actual else {"<record>": {"expected": expected, "actual": actual}}
    return {
        field: {
            "expected": expected.get(field, "<missing>"),
            "actual": actual.get(field, "<missing>"),
        }
        for field in sorted(set(expected) | set(actual))
        if expected.get(field, "<missing>") != actual.get(field, "<missing>")
    }


def diff_is_empty(diff: dict[str, Any]) -> bool:
    return not (diff["tables_added"] or diff["tables_removed"] or diff["tables"])


def render_diff(diff: dict[str, Any]) -> str:
    """Readable lines, one change per line."""
    lines = [f"table {t}: added (not expected)" for t in diff["tables_added"]]
    lines += [f"table {t}: missing (expected)" for t in diff["tables_removed"]]
    for table, change in diff["tables"].items():
        lines += [f"{table}[{k}]: unexpected new record" for k in change["records_added"]]
        lines += [f"{table}[{k}]: expected record is missing" for k in change["records_removed"]]
        for key, fields in change["records_changed"].items():
            for field, pair in fields.items():
                lines.append(
                    f"{table}[{key}].{field}: expected {pair['expected']!r}, got {pair['actual']!r}"
                )
    return "\n".join(lines) if lines else "no differences"


def session_check(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """Superset check: every expected key/value is in ``actual`` (strings case-insensitive)."""
    mismatched = {}
    for key, want in expected.items():
        got = actual.get(key, "<missing>")
        if not _same(want, got):
            mismatched[key] = {"expected": want, "actual": got}
    return {"ok": not mismatched, "mismatched": mismatched}


def _same(want: Any, got: Any) -> bool:
    want, got = normalise(want), normalise(got)
    if isinstance(want, str) and isinstance(got, str):
        return want.casefold() == got.casefold()
    return bool(want == got)
