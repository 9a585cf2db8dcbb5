"""Fixed-bin histograms small enough to keep in ``summary.json``, so a report can draw a
distribution without reading unit files.

Bins are explicit edges; values outside them are counted in ``below`` / ``above`` so nothing
silently leaves the total (``n`` = every value given). Several systems share one set of edges
(``shared_edges``), so their histograms can be overlaid bar for bar."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

MAX_BINS = 40
# Bin widths tried in order, in the values' unit; the first that covers the 99th percentile
# of all values in at most MAX_BINS bins is used.
WIDTH_LADDER = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
MOS_EDGES = tuple(1.0 + 0.25 * i for i in range(17))  # 1.0 .. 5.0 in quarter steps


def fixed_histogram(values: Iterable[float], edges: Sequence[float]) -> dict[str, Any]:
    """``{"edges", "counts", "below", "above", "n"}``: bins are ``[e_i, e_i+1)``, the last
    one closed, like ``numpy.histogram``."""
    array = np.asarray([float(v) for v in values if v is not None and math.isfinite(v)])
    edge_array = np.asarray(edges, dtype=float)
    counts, _ = np.histogram(array, bins=edge_array)
    return {
        "edges": [float(e) for e in edge_array],
        "counts": [int(c) for c in counts],
        "below": int(np.sum(array < edge_array[0])),
        "above": int(np.sum(array > edge_array[-1])),
        "n": int(array.size),
    }


def shared_edges(samples: Iterable[Sequence[float]]) -> list[float]:
    """Edges from 0 for non-negative values (durations), wide enough for the 99th percentile
    of all samples together in at most ``MAX_BINS`` bins of a round width."""
    pooled = [float(v) for sample in samples for v in sample if math.isfinite(v)]
    top = float(np.quantile(pooled, 0.99)) if pooled else 1.0
    for width in WIDTH_LADDER:
        if top <= width * MAX_BINS:
            break
    bins = max(1, math.ceil(top / width)) if top > 0 else 1
    return [round(width * i, 6) for i in range(bins + 1)]
