"""Narrowing of the JSON sections the report reads (``summary.json`` and its extras).

A section that is absent or null reads as empty, as ``entry.get(key) or {}`` did before the
sections were typed; a reader that needs a number narrows with ``number``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from voxeval.json_types import JSONReadObject, JSONReadValue


def section(value: JSONReadValue) -> JSONReadObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def entries(value: JSONReadValue) -> Sequence[JSONReadValue]:
    """``value`` when it is a JSON array, else an empty one (a string is not an array)."""
    return value if isinstance(value, (list, tuple)) else ()


def number(value: JSONReadValue) -> float | None:
    """``value`` when it is a number (``int`` or ``float``, never ``bool``), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def sections(value: JSONReadValue) -> list[tuple[str, JSONReadObject]]:
    """The (key, object) pairs of a JSON object whose values are objects, in order."""
    return [(key, inner) for key, inner in section(value).items() if isinstance(inner, Mapping)]


def objects(value: JSONReadValue) -> list[JSONReadObject]:
    """The objects in a JSON array, in order."""
    return [inner for inner in entries(value) if isinstance(inner, Mapping)]


def as_float(value: JSONReadValue) -> float:
    """``float(value)`` for a number or a numeric string; TypeError otherwise, as ``float``."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"expected a number, got {value!r}")


def as_int(value: JSONReadValue) -> int:
    """``int(value)`` for a number or an integer string; TypeError otherwise, as ``int``."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"expected an integer, got {value!r}")


def whole_total(value: JSONReadValue) -> int:
    """The sum of a JSON object's whole-number values (counts by cause); 0 for anything
    else."""
    return sum(n for n in section(value).values() if isinstance(n, int))
