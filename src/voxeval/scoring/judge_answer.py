"""Typed reads of a judge's JSON answer. The answer was validated against its template's
schema, so a field of the wrong type is a schema that does not say what the metric reads:
``JudgeOutputError`` naming the field, never a silent default."""

from __future__ import annotations

from voxeval.json_types import JSONArray, JSONObject, JSONReadValue, JSONValue
from voxeval.scoring.judge import JudgeOutputError


def _wrong(where: str, value: JSONReadValue, wanted: str) -> JudgeOutputError:
    return JudgeOutputError(f"judge answer field {where!r} is not {wanted}: {value!r}")


def as_int(value: JSONReadValue, where: str) -> int:
    """``int(value)`` for a number or a numeric string (JSON Schema's ``integer`` allows 2.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _wrong(where, value, "a number")
    try:
        return int(value)
    except ValueError as exc:
        raise _wrong(where, value, "a number") from exc


def as_number(value: JSONReadValue, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(where, value, "a number")
    return float(value)


def as_object(value: JSONValue, where: str) -> JSONObject:
    if not isinstance(value, dict):
        raise _wrong(where, value, "an object")
    return value


def as_list(value: JSONValue, where: str) -> JSONArray:
    if not isinstance(value, list):
        raise _wrong(where, value, "a list")
    return value


def as_objects(value: JSONValue, where: str) -> list[JSONObject]:
    """A list whose items are all objects."""
    return [as_object(item, f"{where}[{i}]") for i, item in enumerate(as_list(value, where))]


def as_strings(value: JSONValue, where: str) -> list[str]:
    """A list of strings (each item ``str()``-ed as the metrics always read them)."""
    return [str(item) for item in as_list(value, where)]
