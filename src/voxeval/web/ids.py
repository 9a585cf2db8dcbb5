"""Numeric ids in URLs: a path like ``/item/99999999999999999999`` parses as a Python int that
no database column holds (SQLite overflows past 2**63, PostgreSQL ``INTEGER`` past 2**31), so
the apps answer 404 for any id outside the column's range instead of passing it on."""

from __future__ import annotations

MAX_ROW_ID = 2**31 - 1  # the largest value of a PostgreSQL INTEGER (and of our row ids)


def storable_id(value: int) -> bool:
    """Whether ``value`` can be a row id (1 .. MAX_ROW_ID)."""
    return 0 < value <= MAX_ROW_ID
