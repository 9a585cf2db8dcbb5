"""Tool arguments whose JSON type differs from the tool's schema, converted as the EVA-Bench
reference's tools accept them.

The reference executor checks no schema: it hands the agent's arguments to the tool, whose
parameter model converts them (``duration_days=60`` where the declaration says ``string``,
``"60"`` where it says ``integer``). A suite with ``tool_arguments: coerce`` does the same: a
top-level argument whose type does not match is converted when the conversion loses nothing,
and the mismatch is kept as a diagnostic of the call instead of refusing it. Only scalar
conversions are made (number <-> text, text -> boolean); anything else is left for the schema
check, which still refuses it."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Literal

from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue, JSONValue

ToolArguments = Literal["strict", "coerce"]
STRICT: ToolArguments = "strict"
COERCE: ToolArguments = "coerce"

_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class _Missing(enum.Enum):
    """No lossless conversion exists (a sentinel: None is a value an argument can take)."""

    MISSING = "missing"


_MISSING = _Missing.MISSING


def coerce_arguments(arguments: JSONObject, schema: JSONReadObject) -> tuple[JSONObject, list[str]]:
    """``arguments`` with each mismatched top-level value converted to its declared type where
    that is lossless, and one readable line per conversion (the diagnostic)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):  # absent (the schema was checked at load)
        properties = {}
    out = dict(arguments)
    notes: list[str] = []
    for name, value in arguments.items():
        declared = _declared_types(properties.get(name))
        if not declared or any(_is_type(value, t) for t in declared):
            continue
        converted = next(
            (c for c in (_convert(value, t) for t in declared) if c is not _MISSING), _MISSING
        )
        if converted is _MISSING:
            continue
        out[name] = converted
        notes.append(
            f"{name}: sent {json.dumps(value)} ({_json_type(value)}), the schema says "
            f"{' or '.join(declared)}; accepted as {json.dumps(converted)}"
        )
    return out, notes


def _declared_types(prop: JSONReadValue) -> list[str]:
    if not isinstance(prop, dict):
        return []
    declared = prop.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def _is_type(value: JSONValue, declared: str) -> bool:
    # JSON-schema types: a bool is not a number, a whole float is an integer
    if declared == "string":
        return isinstance(value, str)
    if declared == "boolean":
        return isinstance(value, bool)
    if declared == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if declared == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if declared == "null":
        return value is None
    if declared == "array":
        return isinstance(value, list)
    if declared == "object":
        return isinstance(value, dict)
    return True  # an unknown type name: leave it to the schema check


def _convert(value: JSONValue, declared: str) -> JSONValue | _Missing:
    """The value as ``declared`` when nothing is lost, else ``_MISSING``."""
    if declared == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        text = value.strip()
        if declared == "integer" and _INTEGER.match(text):
            return int(text)
        if declared == "number" and _NUMBER.match(text):
            number = float(text)
            return int(number) if _INTEGER.match(text) else number
        if declared == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
    return _MISSING


def _json_type(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"
