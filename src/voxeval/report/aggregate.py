"""Turn stored score rows into the standard per-system summary that protocols build on.

Shape per system::

    {"overall": {metric: stat}, "by_category": {category: {metric: stat}},
     "by_condition": {condition: {metric: stat}}, "not_run": {metric: reason},
     "partial": {metric: {"not_run": count, "reason": most common reason}},
     "units": {"done": n, "failed": n, "pending": n}}

where ``stat`` is ``{"mean", "ci_low", "ci_high", "n"}`` (see ``metric_stats``). A metric whose
every score is not-run appears only in ``not_run``; one that ran for some units is summarised
over those units and the rest are counted in ``partial``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from voxeval.analysis.bootstrap import Stat, metric_stats
from voxeval.store.records import ScoreRow

__all__ = ["group_stats", "metric_stats", "standard_summary"]


def group_stats(
    rows: Iterable[ScoreRow], metrics: Sequence[str], *, seed: int = 0
) -> dict[str, Stat]:
    """``{metric: stat}`` over the rows that ran, for the metrics that have any value."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.ran and row.value is not None:
            values[row.metric].append(float(row.value))
    return {m: metric_stats(values[m], seed=seed) for m in metrics if values.get(m)}


def _grouped(
    rows: list[ScoreRow], attr: str, metrics: list[str], seed: int
) -> dict[str, dict[str, Stat]]:
    groups: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        groups[str(getattr(row, attr))].append(row)
    out = {key: group_stats(group, metrics, seed=seed) for key, group in groups.items()}
    return {key: stats for key, stats in out.items() if stats}


def _most_common(reasons: list[str]) -> str:
    return Counter(reasons).most_common(1)[0][0] if reasons else "not run"


def standard_summary(
    rows: Iterable[ScoreRow],
    metrics: Sequence[str] | None = None,
    *,
    seed: int = 0,
    units: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per-system summary of ``rows``. ``metrics`` restricts (and orders) the metrics reported;
    None = every metric present. ``units`` (``RunStore.status_counts()``) adds unit counts,
    so systems whose units all failed still appear."""
    by_system: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        by_system[row.system].append(row)
    systems = list(by_system)
    for name in units or {}:
        if name not in by_system:
            systems.append(name)

    out: dict[str, dict[str, Any]] = {}
    for system in systems:
        sys_rows = by_system.get(system, [])
        present = list(dict.fromkeys(r.metric for r in sys_rows))
        wanted = list(metrics) if metrics is not None else present
        ran_metrics: list[str] = []
        not_run: dict[str, str] = {}
        partial: dict[str, dict[str, Any]] = {}
        for metric in wanted:
            metric_rows = [r for r in sys_rows if r.metric == metric]
            reasons = [r.error or "no value" for r in metric_rows if not r.ran]
            if not metric_rows:
                if metrics is not None:
                    not_run[metric] = "no scores stored for this metric"
                continue
            if len(reasons) == len(metric_rows):
                not_run[metric] = _most_common(reasons)
                continue
            ran_metrics.append(metric)
            if reasons:
                partial[metric] = {"not_run": len(reasons), "reason": _most_common(reasons)}

        entry: dict[str, Any] = {
            "overall": group_stats(sys_rows, ran_metrics, seed=seed),
            "by_category": _grouped(sys_rows, "category", ran_metrics, seed),
            "by_condition": _grouped(sys_rows, "condition", ran_metrics, seed),
            "not_run": not_run,
            "partial": partial,
        }
        if units is not None:
            counts = units.get(system, {})
            entry["units"] = {k: int(counts.get(k, 0)) for k in ("done", "failed", "pending")}
        out[system] = entry
    return out
