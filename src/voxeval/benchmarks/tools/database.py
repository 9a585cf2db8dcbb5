"""The shape of a scenario database.

A database maps names to values. Most are *record tables* (record key -> record mapping), the
only kind declarative tools read and write; released EVA databases also hold plain values
(``_current_date``: a string) and tables stored as lists, which are kept and compared but
cannot be looked up by key."""

from __future__ import annotations

from typing import TypeGuard

from voxeval.json_types import JSONObject, JSONReadValue, JSONValue

# name -> record table, list or plain value (see ``is_record_table``)
Database = dict[str, JSONValue]
RecordTable = dict[str, JSONObject]


def is_record_table(value: JSONReadValue) -> TypeGuard[RecordTable]:
    """True for a mapping of record keys to record mappings (an empty mapping counts)."""
    return isinstance(value, dict) and all(isinstance(row, dict) for row in value.values())


def describe_value(value: JSONReadValue) -> str:
    """What a database entry that is not a record table holds, for error messages."""
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return "a mapping whose values are not all records"
    return f"a plain value ({type(value).__name__})"
