"""Normal form, hashing and structured diffs of scenario databases (task completion).

The hash follows the EVA-Bench reference so that a database hashes to the same hex digest
as there: the normalised database without ``session`` is serialised by ``json.dumps`` with
sorted keys, compact separators, ASCII escapes and ``str`` for anything else, then SHA-256.
Normalising turns whole finite floats into ints and the strings "none"/"null" (any case,
surrounding blanks) into null. A list keeps its order unless it is the value of a field
declared order-free (``TaskCompletionSettings.order_free_lists``); ``sort_all_lists`` is the
older, looser rule where no list order matters."""

from __future__ import annotations

import hashlib
import json
import math
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from voxeval.benchmarks.tools.database import Database, RecordTable, is_record_table
from voxeval.json_types import JSONObject, JSONValue

SESSION_KEY = "session"
_NULL_STRINGS = {"none", "null"}
# the fields whose list order the EVA-Bench reference ignores, in every domain
REFERENCE_ORDER_FREE_LISTS = (
    "asset_recoveries",
    "bookings",
    "group_memberships",
    "notifications",
    "standby_list",
    "system_accounts",
)
_MISSING = "<missing>"


class TaskCompletionSettings(BaseModel):
    """A suite's ``task_completion:`` settings (suite.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # fields (at any depth) whose list value is compared as a multiset
    order_free_lists: tuple[str, ...] = Field(default=REFERENCE_ORDER_FREE_LISTS)
    # every list is order-free (voxeval's rule before EVA parity; not the reference's)
    sort_all_lists: bool = False
    # fail task completion when the expected ``session`` is not met, before the hashes are
    # compared, as the EVA-Bench reference does; false scores the database hash alone (the
    # session is then only reported, as ``authentication_success``)
    require_session: bool = True


REFERENCE_SETTINGS = TaskCompletionSettings()


class ValueChange(TypedDict):
    expected: JSONValue
    actual: JSONValue


class ListItemChange(TypedDict):
    index: int
    expected: JSONValue
    actual: JSONValue


class TableDiff(TypedDict):
    records_added: list[str]
    records_removed: list[str]
    records_changed: dict[str, dict[str, ValueChange]]  # record key -> field -> change


class DatabaseDiff(TypedDict):
    """What ``diff_databases`` returns (see there)."""

    tables_added: list[str]
    tables_removed: list[str]
    tables: dict[str, TableDiff]
    lists: dict[str, list[ListItemChange]]
    values: dict[str, ValueChange]


class SessionCheck(TypedDict):
    ok: bool
    mismatched: dict[str, ValueChange]


def normalise(value: JSONValue, settings: TaskCompletionSettings = REFERENCE_SETTINGS) -> JSONValue:
    """The comparable form of ``value`` (see the module docstring); mapping keys as strings."""
    if isinstance(value, dict):
        out: JSONObject = {}
        for key, item in value.items():
            name = str(key)
            normal = normalise(item, settings)
            if isinstance(normal, list) and name in settings.order_free_lists:
                normal = sorted(normal, key=_order_key)
            out[name] = normal
        return out
    if isinstance(value, list | tuple):
        items = [normalise(v, settings) for v in value]
        return sorted(items, key=_order_key) if settings.sort_all_lists else items
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, str):
        return None if value.strip().lower() in _NULL_STRINGS else value
    return value


def _order_key(item: JSONValue) -> str:
    # the reference sorts order-free lists by each item's JSON (default separators, ASCII)
    return json.dumps(item, sort_keys=True, default=str)


def hash_json(value: JSONValue) -> str:
    """The serialisation that is hashed (the reference's ``json.dumps`` arguments)."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def without_session(db: Database) -> Database:
    return {k: v for k, v in db.items() if k != SESSION_KEY}


def db_hash(db: Database, settings: TaskCompletionSettings = REFERENCE_SETTINGS) -> str:
    """SHA-256 hex digest of the normalised database without ``session``; with the default
    settings equal to the EVA-Bench reference's hash of the same database."""
    return hashlib.sha256(hash_json(normalise(without_session(db), settings)).encode()).hexdigest()


def diff_databases(
    expected: Database, actual: Database, settings: TaskCompletionSettings = REFERENCE_SETTINGS
) -> DatabaseDiff:
    """Structured diff of two databases after normalising (session excluded)::

    {"tables_added": [...], "tables_removed": [...],
     "tables": {table: {"records_added": [...], "records_removed": [...],
                        "records_changed": {key: {field: {"expected", "actual"}}}}},
     "lists": {name: [{"index": i, "expected", "actual"}]},   # tables stored as lists
     "values": {name: {"expected", "actual"}}}                # plain values, changed kinds

    Names in ``tables_added``/``tables_removed`` are any top-level entries, tables or not."""
    exp = _normal_tables(expected, settings)
    act = _normal_tables(actual, settings)
    out: DatabaseDiff = {
        "tables_added": sorted(set(act) - set(exp)),
        "tables_removed": sorted(set(exp) - set(act)),
        "tables": {},
        "lists": {},
        "values": {},
    }
    for name in sorted(set(exp) & set(act)):
        want, got = exp[name], act[name]
        if want == got:
            continue
        if is_record_table(want) and is_record_table(got):
            out["tables"][name] = _table_diff(want, got)
        elif isinstance(want, list) and isinstance(got, list):
            out["lists"][name] = _list_diff(want, got)
        else:
            out["values"][name] = {"expected": want, "actual": got}
    return out


def _normal_tables(db: Database, settings: TaskCompletionSettings) -> JSONObject:
    normal = normalise(without_session(db), settings)
    assert isinstance(normal, dict)  # a mapping normalises to a mapping
    return normal


def _table_diff(expected: RecordTable, actual: RecordTable) -> TableDiff:
    changed: dict[str, dict[str, ValueChange]] = {}
    for key in sorted(set(expected) & set(actual)):
        fields = _field_diff(expected[key], actual[key])
        if fields:
            changed[key] = fields
    return {
        "records_added": sorted(set(actual) - set(expected)),
        "records_removed": sorted(set(expected) - set(actual)),
        "records_changed": changed,
    }


def _list_diff(expected: list[JSONValue], actual: list[JSONValue]) -> list[ListItemChange]:
    """Element-wise differences; an item only one side has is ``<missing>`` on the other."""
    out: list[ListItemChange] = []
    for index in range(max(len(expected), len(actual))):
        want = expected[index] if index < len(expected) else _MISSING
        got = actual[index] if index < len(actual) else _MISSING
        if want != got:
            out.append({"index": index, "expected": want, "actual": got})
    return out


def _field_diff(expected: JSONValue, actual: JSONValue) -> dict[str, ValueChange]:
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return {} if expected == actual else {"<record>": {"expected": expected, "actual": actual}}
    return {
        field: {
            "expected": expected.get(field, _MISSING),
            "actual": actual.get(field, _MISSING),
        }
        for field in sorted(set(expected) | set(actual))
        if expected.get(field, _MISSING) != actual.get(field, _MISSING)
    }


def diff_is_empty(diff: DatabaseDiff) -> bool:
    keys = ("tables_added", "tables_removed", "tables", "lists", "values")
    return not any(diff.get(k) for k in keys)


def render_diff(diff: DatabaseDiff) -> str:
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
    for name, items in diff.get("lists", {}).items():
        lines += [
            f"{name}[{d['index']}]: expected {d['expected']!r}, got {d['actual']!r}" for d in items
        ]
    for name, pair in diff.get("values", {}).items():
        lines.append(f"{name}: expected {pair['expected']!r}, got {pair['actual']!r}")
    return "\n".join(lines) if lines else "no differences"


def session_check(expected: JSONValue, actual: JSONValue) -> SessionCheck:
    """The reference's auth check: for every expected key, the actual value (None when the
    key is absent) equals the expected one, strings compared lower-cased and otherwise as
    they are ("None" is the string "none" here, not null). Extra actual keys are allowed.
    A session given as null (or any non-mapping) counts as empty: nothing expected, or
    nothing written."""
    expected = expected if isinstance(expected, dict) else {}
    actual = actual if isinstance(actual, dict) else {}
    mismatched: dict[str, ValueChange] = {
        key: {"expected": want, "actual": actual.get(key)}
        for key, want in expected.items()
        if _session_form(actual.get(key)) != _session_form(want)
    }
    return {"ok": not mismatched, "mismatched": mismatched}


def _session_form(value: JSONValue) -> JSONValue:
    return value.lower() if isinstance(value, str) else value
