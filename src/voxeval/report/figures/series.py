"""Helpers shared by the figures that draw means with 95% CIs: reading a stat, error-bar
lengths (none where the summary gives no interval) and the matching data table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.report.figures.svg import Cell, DataTable

STAT_COLUMNS = ["mean", "95% CI low", "95% CI high", "n"]


def is_stat(value: Any) -> bool:
    return isinstance(value, Mapping) and "mean" in value and "n" in value


def has_mean(value: Any) -> bool:
    return is_stat(value) and isinstance(value.get("mean"), int | float)


def stat_cells(stat: Mapping[str, Any]) -> list[Cell]:
    return [stat.get("mean"), stat.get("ci_low"), stat.get("ci_high"), stat.get("n")]


def whiskers(stats: Sequence[Mapping[str, Any]]) -> list[list[float]]:
    """``[[below...], [above...]]`` for ``errorbar``/``bar``: 0 where there is no interval."""
    below, above = [], []
    for stat in stats:
        low, high, mean = stat.get("ci_low"), stat.get("ci_high"), float(stat["mean"])
        below.append(mean - float(low) if low is not None else 0.0)
        above.append(float(high) - mean if high is not None else 0.0)
    return [below, above]


def stat_table(
    keys: Sequence[str], rows: Sequence[tuple[Sequence[Cell], Mapping[str, Any]]]
) -> DataTable:
    """One row per (key cells, stat)."""
    return DataTable([*keys, *STAT_COLUMNS], [[*k, *stat_cells(s)] for k, s in rows])
