"""The compact ``distributions`` entry a protocol adds to each system's summary: fixed-bin
histograms (MOS, latencies) and per-turn statistics, so the report's figures are drawn from
``summary.json`` alone. Every part is bounded (at most ``MAX_BINS`` bins, ``MAX_TURNS`` turns)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.histogram import MOS_EDGES, fixed_histogram, shared_edges
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.store.records import ScoreRow

MAX_TURNS = 30

Samples = Mapping[str, Mapping[str, Sequence[float]]]
"""system -> field -> values."""


def mos_histograms(rows: Sequence[ScoreRow]) -> dict[str, JSONObject]:
    """system -> the histogram of its ``mos`` scores (quarter-point bins from 1 to 5)."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.metric == "mos" and row.ran and row.value is not None:
            values[row.system].append(float(row.value))
    return {system: fixed_histogram(v, MOS_EDGES) for system, v in values.items()}


def latency_histograms(samples: Samples) -> dict[str, JSONObject]:
    """system -> field -> histogram in seconds; one set of edges per field for all systems."""
    fields = list(dict.fromkeys(f for by_field in samples.values() for f in by_field))
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    for name in fields:
        edges = shared_edges(by_field.get(name, ()) for by_field in samples.values())
        for system, by_field in samples.items():
            if by_field.get(name):
                out[system][name] = {**fixed_histogram(by_field[name], edges), "unit": "s"}
    return dict(out)


def turn_stats(points: Sequence[tuple[str, int, float]], *, seed: int = 0) -> dict[str, JSONObject]:
    """``{"T1": stat, ...}`` from (independent unit, turn number from 1, value) points: the
    mean per turn with a bootstrap CI that resamples the units (first ``MAX_TURNS`` turns)."""
    values: dict[int, list[float]] = defaultdict(list)
    clusters: dict[int, list[str]] = defaultdict(list)
    for unit, turn, value in points:
        if 1 <= turn <= MAX_TURNS:
            values[turn].append(value)
            clusters[turn].append(unit)
    return {
        f"T{turn}": metric_stats(values[turn], clusters=clusters[turn], seed=seed)
        for turn in sorted(values)
    }


def add_distributions(entry: dict[str, JSONReadValue], **parts: JSONReadObject | None) -> None:
    """Set ``entry["distributions"]`` to the non-empty ``parts`` (nothing when all are empty)."""
    kept: dict[str, JSONReadObject] = {name: part for name, part in parts.items() if part}
    if kept:
        entry["distributions"] = kept


def response_latencies(rows: Sequence[ScoreRow]) -> dict[str, list[tuple[str, int, float]]]:
    """system -> (scenario, k, seconds) of the k-th answered turn of each call, from the
    ``per_turn_s`` the ``response_latency`` metric stores (turns the agent started before the
    caller finished are not in it: they have no response latency)."""
    out: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
    for row in rows:
        per_turn = row.details.get("per_turn_s") if row.metric == "response_latency" else None
        if row.ran and isinstance(per_turn, list):
            out[row.system] += [(row.item_id, k, float(s)) for k, s in enumerate(per_turn, 1)]
    return dict(out)
