"""Turn stored score rows into the standard per-system summary that protocols build on.

Shape per system::

    {"overall": {metric: stat}, "by_category": {category: {metric: stat}},
     "by_condition": {condition: {metric: stat}}, "not_run": {metric: reason},
     "partial": {metric: {"not_run": count, "reason": most common reason}},
     "pass_rates": {metric: stat}, "statistics": {...},
     "units": {"done": n, "failed": n, "pending": n}}

where ``stat`` is ``{"mean", "ci_low", "ci_high", "n", "clusters", "method"}`` (see
``metric_stats`` and ``rate_stats``). A metric whose every score is not-run appears only in
``not_run``; one that ran for some units is summarised over those units and the rest are
counted in ``partial``.

Intervals resample the protocol's independent unit: ``clusters`` maps an item id to its
cluster (single-turn: the query id); without it an item is its own cluster, which groups all
trials and conditions of an item (live calls: the scenario). Metrics whose every score is a
pass/fail outcome (value 0 or 1 with a verdict, e.g. task_completion) are rates and get a
Wilson interval; ``pass_rates`` gives the share of passed verdicts of threshold metrics.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypedDict

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Stat, metric_stats
from voxeval.analysis.proportion import rate_stats
from voxeval.store.records import ScoreRow
from voxeval.store.unit_status import SystemCounts

__all__ = [
    "group_stats",
    "metric_stats",
    "pass_rate_stats",
    "rate_metrics",
    "standard_summary",
]

Clusters = Mapping[str, str]
"""item id -> id of its independent unit (items not listed are their own unit)."""


def _cluster(row: ScoreRow, clusters: Clusters | None) -> str:
    return clusters.get(row.item_id, row.item_id) if clusters else row.item_id


def rate_metrics(rows: Iterable[ScoreRow]) -> set[str]:
    """Metrics whose every scored row is a pass/fail outcome: value 0 or 1 with a verdict."""
    seen: set[str] = set()
    not_rates: set[str] = set()
    for row in rows:
        if not row.ran:
            continue
        seen.add(row.metric)
        if row.passed is None or float(row.value) not in (0.0, 1.0):  # type: ignore[arg-type]
            not_rates.add(row.metric)
    return seen - not_rates


def group_stats(
    rows: Iterable[ScoreRow],
    metrics: Sequence[str],
    *,
    seed: int = 0,
    clusters: Clusters | None = None,
    rates: Collection[str] | None = None,
) -> dict[str, Stat]:
    """``{metric: stat}`` over the rows that ran, for the metrics that have any value.

    ``rates`` names the pass/fail metrics (Wilson interval); None = detect them in ``rows``.
    """
    rows = list(rows)
    rates = rate_metrics(rows) if rates is None else rates
    values: dict[str, list[float]] = defaultdict(list)
    keys: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.ran and row.value is not None:
            values[row.metric].append(float(row.value))
            keys[row.metric].append(_cluster(row, clusters))
    out: dict[str, Stat] = {}
    for m in metrics:
        if not values.get(m):
            continue
        if m in rates:
            out[m] = rate_stats(values[m], clusters=keys[m])
        else:
            out[m] = metric_stats(values[m], clusters=keys[m], seed=seed)
    return out


def pass_rate_stats(
    rows: Iterable[ScoreRow],
    metrics: Sequence[str],
    *,
    clusters: Clusters | None = None,
    skip: Collection[str] = (),
) -> dict[str, Stat]:
    """``{metric: Wilson stat}`` of the share of passed verdicts, for the metrics in
    ``metrics`` (except ``skip``) that gave a verdict on any scored row."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    keys: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.ran and row.passed is not None and row.metric not in skip:
            outcomes[row.metric].append(bool(row.passed))
            keys[row.metric].append(_cluster(row, clusters))
    return {m: rate_stats(outcomes[m], clusters=keys[m]) for m in metrics if outcomes.get(m)}


def _grouped(
    rows: list[ScoreRow],
    attr: str,
    metrics: list[str],
    seed: int,
    clusters: Clusters | None,
    rates: Collection[str],
) -> dict[str, dict[str, Stat]]:
    groups: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        groups[str(getattr(row, attr))].append(row)
    out = {
        key: group_stats(group, metrics, seed=seed, clusters=clusters, rates=rates)
        for key, group in groups.items()
    }
    return {key: stats for key, stats in out.items() if stats}


class StatisticsNote(TypedDict):
    unit: str
    clusters: int
    resamples: int
    confidence: float
    rate_metrics: list[str]


def statistics_note(
    rows: Iterable[ScoreRow], unit: str, clusters: Clusters | None, rates: Collection[str]
) -> StatisticsNote:
    """How the intervals of a system were computed (shown in the report header)."""
    independent = {_cluster(r, clusters) for r in rows if r.ran}
    return {
        "unit": unit,
        "clusters": len(independent),
        "resamples": DEFAULT_RESAMPLES,
        "confidence": DEFAULT_CONFIDENCE,
        "rate_metrics": sorted(rates),
    }


def _most_common(reasons: list[str]) -> str:
    return Counter(reasons).most_common(1)[0][0] if reasons else "not run"


def rows_by_system(rows: Iterable[ScoreRow]) -> dict[str, list[ScoreRow]]:
    """The score rows of each system, in the order systems first appear."""
    by_system: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        by_system[row.system].append(row)
    return by_system


def standard_summary(
    rows: Iterable[ScoreRow],
    metrics: Sequence[str] | None = None,
    *,
    seed: int = 0,
    units: Mapping[str, SystemCounts] | None = None,
    clusters: Clusters | None = None,
    cluster_unit: str = "item",
) -> dict[str, dict[str, Any]]:
    """Per-system summary of ``rows``. ``metrics`` restricts (and orders) the metrics reported;
    None = every metric present. ``units`` (``RunStore.units.status_counts()``) adds unit counts,
    so systems whose units all failed still appear. ``clusters`` maps item ids to their
    independent unit, named ``cluster_unit`` in the report (see the module doc)."""
    rows = list(rows)
    rates = rate_metrics(rows)  # decided over all systems so every system uses one method
    by_system = rows_by_system(rows)
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
            "overall": group_stats(
                sys_rows, ran_metrics, seed=seed, clusters=clusters, rates=rates
            ),
            "by_category": _grouped(sys_rows, "category", ran_metrics, seed, clusters, rates),
            "by_condition": _grouped(sys_rows, "condition", ran_metrics, seed, clusters, rates),
            "not_run": not_run,
            "partial": partial,
        }
        pass_rates = pass_rate_stats(sys_rows, ran_metrics, clusters=clusters, skip=rates)
        if pass_rates:
            entry["pass_rates"] = pass_rates
        reported_rates = [m for m in ran_metrics if m in rates]
        entry["statistics"] = statistics_note(sys_rows, cluster_unit, clusters, reported_rates)
        if units is not None:
            counts = units.get(system)
            entry["units"] = {
                "done": int(counts.get("done", 0)) if counts else 0,
                "failed": int(counts.get("failed", 0)) if counts else 0,
                "pending": int(counts.get("pending", 0)) if counts else 0,
            }
        out[system] = entry
    return out
