"""Values grouped by their independent unit (cluster), in a canonical order.

Scores of one query (all its voices, conditions and trials) or of one scenario (all its trials
and conditions) are correlated; the statistics resample whole clusters. The grouping here is
independent of row order: clusters are sorted by key and sums use ``math.fsum`` (exactly
rounded), so permuting the input gives identical numbers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Value = float | int | bool | None


@dataclass(frozen=True)
class ClusteredSample:
    """Kept values (None/NaN dropped) and, per cluster, the sum and count of its values."""

    n: int
    mean: float | None
    totals: np.ndarray
    sizes: np.ndarray
    all_equal: bool

    @property
    def n_clusters(self) -> int:
        return int(self.sizes.size)


def _is_missing(value: Value) -> bool:
    return value is None or math.isnan(float(value))


def clustered_sample(
    values: Iterable[Value], clusters: Sequence[Hashable] | None = None
) -> ClusteredSample:
    """Group ``values`` by ``clusters`` (aligned with ``values``; None = every value is its own
    cluster). A value that is None or NaN is dropped together with its cluster key."""
    values = list(values)
    if clusters is None:
        keys: list[Hashable] = list(range(len(values)))
    else:
        keys = list(clusters)
        if len(keys) != len(values):
            raise ValueError(f"{len(values)} values but {len(keys)} cluster keys")
    groups: dict[Hashable, list[float]] = defaultdict(list)
    for value, key in zip(values, keys, strict=True):
        if not _is_missing(value):
            groups[key].append(float(value))  # type: ignore[arg-type]
    kept = [v for group in groups.values() for v in group]
    if not kept:
        empty = np.zeros(0, dtype=np.float64)
        return ClusteredSample(0, None, empty, empty, all_equal=True)
    if clusters is None:
        # Singleton clusters have no key to sort by: order them by value instead.
        ordered = [[v] for v in sorted(kept)]
    else:
        ordered = [groups[k] for k in _sorted_keys(groups)]
    totals = np.array([math.fsum(group) for group in ordered], dtype=np.float64)
    sizes = np.array([len(group) for group in ordered], dtype=np.float64)
    first = kept[0]
    return ClusteredSample(
        n=len(kept),
        mean=math.fsum(kept) / len(kept),
        totals=totals,
        sizes=sizes,
        all_equal=all(v == first for v in kept),
    )


def _sorted_keys(groups: dict[Hashable, list[float]]) -> list[Hashable]:
    """Cluster keys by (text, repr): a canonical order for keys of mixed types. Text keys
    (query and scenario ids, the usual case) sort as themselves, in the same order."""
    if all(type(key) is str for key in groups):
        return sorted(groups)  # type: ignore[type-var]
    return sorted(groups, key=lambda k: (str(k), repr(k)))
