"""Which speaker-profile dimensions are confounded with the TTS engine.

A dimension (gender, age, timbre) is confounded with the engine when two of its values were
never rendered by a common engine: every comparison between them is also a comparison
between engines (e.g. every senior voice is espeak and every adult voice flite), so a
difference in scores cannot be attributed to the speaker rather than to the synthesizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Any

from voxeval.json_types import JSONReadValue

PROFILE_DIMENSIONS = ("gender", "age", "timbre")


def engines_by_value(
    rows: Iterable[tuple[Mapping[str, JSONReadValue], str]],
    dimensions: tuple[str, ...] = PROFILE_DIMENSIONS,
) -> dict[str, dict[str, set[str]]]:
    """``{dimension: {value: engines}}`` over ``(profile fields, engine)`` rows."""
    table: dict[str, dict[str, set[str]]] = {d: {} for d in dimensions}
    for fields, engine in rows:
        for dimension in dimensions:
            value = fields.get(dimension)
            if value is not None:
                table[dimension].setdefault(str(value), set()).add(engine)
    return table


def separated_pairs(values: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of values that share no engine."""
    return [(a, b) for a, b in combinations(sorted(values), 2) if not values[a] & values[b]]


def engine_confounds(
    rows: Iterable[tuple[Mapping[str, JSONReadValue], str]],
    dimensions: tuple[str, ...] = PROFILE_DIMENSIONS,
) -> dict[str, dict[str, Any]]:
    """For each confounded dimension: the engines of each value, the value pairs that share
    no engine, and a one-line note. Empty when nothing is confounded."""
    confounds: dict[str, dict[str, Any]] = {}
    for dimension, values in engines_by_value(rows, dimensions).items():
        pairs = separated_pairs(values)
        if not pairs:
            continue
        involved = sorted({v for pair in pairs for v in pair})
        where = "; ".join(f"{v} on {'/'.join(sorted(values[v]))}" for v in involved)
        confounds[dimension] = {
            "engines": {v: sorted(e) for v, e in sorted(values.items())},
            "separated": [list(pair) for pair in pairs],
            "note": f"{dimension} is confounded with the TTS engine ({where}): differences "
            f"by {dimension} cannot be told apart from differences between engines",
        }
    return confounds


def count_separated(
    rows: Iterable[tuple[Mapping[str, JSONReadValue], str]],
    dimensions: tuple[str, ...] = PROFILE_DIMENSIONS,
) -> int:
    """How many value pairs, over all dimensions, share no engine (0 = no confound)."""
    table = engines_by_value(rows, dimensions)
    return sum(len(separated_pairs(values)) for values in table.values())
