"""Helpers shared by the figures that draw means with 95% CIs: reading a stat, error-bar
lengths (none where the summary gives no interval) and the matching data table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeGuard

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.figures.svg import Cell, DataTable
from voxeval.report.json_fields import as_float

STAT_COLUMNS = ["mean", "95% CI low", "95% CI high", "n"]


def is_stat(value: JSONReadValue) -> TypeGuard[JSONReadObject]:
    return isinstance(value, Mapping) and "mean" in value and "n" in value


def has_mean(value: JSONReadValue) -> TypeGuard[JSONReadObject]:
    return is_stat(value) and isinstance(value.get("mean"), int | float)


def stat_cells(stat: JSONReadObject) -> list[Cell]:
    return [table_cell(stat.get(key)) for key in ("mean", "ci_low", "ci_high", "n")]


def table_cell(value: JSONReadValue) -> Cell:
    """A table cell as the summary holds it (a number, text or None; anything else as text)."""
    return value if value is None or isinstance(value, str | int | float) else str(value)


def whiskers(stats: Sequence[JSONReadObject]) -> list[list[float]]:
    """``[[below...], [above...]]`` for ``errorbar``/``bar``: 0 where there is no interval."""
    below, above = [], []
    for stat in stats:
        low, high, mean = stat.get("ci_low"), stat.get("ci_high"), as_float(stat["mean"])
        below.append(mean - as_float(low) if low is not None else 0.0)
        above.append(as_float(high) - mean if high is not None else 0.0)
    return [below, above]


def stat_table(
    keys: Sequence[str], rows: Sequence[tuple[Sequence[Cell], JSONReadObject]]
) -> DataTable:
    """One row per (key cells, stat)."""
    return DataTable([*keys, *STAT_COLUMNS], [[*k, *stat_cells(s)] for k, s in rows])
