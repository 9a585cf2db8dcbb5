"""Agreement between two raters (e.g. human and judge scores of the same replies): Pearson and
Spearman correlation, each with a cluster-bootstrap percentile interval that resamples whole
independent units (the query), seeded."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from scipy import stats

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES


def _correlation(kind: str, x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None  # undefined for constant ratings; too few pairs to mean anything
    result = stats.pearsonr(x, y) if kind == "pearson" else stats.spearmanr(x, y)
    value = float(result.statistic)
    return value if np.isfinite(value) else None


def correlation_stats(
    x: Sequence[float],
    y: Sequence[float],
    *,
    clusters: Sequence[Hashable] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """``{"pearson": {"r", "ci_low", "ci_high"}, "spearman": {...}, "n", "clusters",
    "method"}``. ``clusters`` gives each pair's independent unit (None: each pair its own).
    A resample whose ratings are constant has no correlation and is left out of the interval;
    with fewer than 3 clusters there is no interval."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise ValueError("x and y must have the same length")
    keys = list(clusters) if clusters is not None else list(range(len(xs)))
    members: dict[Hashable, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        members[key].append(index)
    groups = [np.asarray(m) for m in members.values()]
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {
        "n": len(xs),
        "clusters": len(groups),
        "method": f"cluster bootstrap ({resamples} percentile resamples of whole clusters)",
    }
    alpha = (1.0 - confidence) / 2
    draws = (
        [np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))])
         for _ in range(resamples)]
        if len(groups) >= 3 else []
    )  # fmt: skip
    for kind in ("pearson", "spearman"):
        r = _correlation(kind, xs, ys)
        boot = [v for idx in draws if (v := _correlation(kind, xs[idx], ys[idx])) is not None]
        low = high = None
        if r is not None and boot:
            low, high = (float(q) for q in np.quantile(boot, [alpha, 1.0 - alpha]))
        out[kind] = {"r": r, "ci_low": low, "ci_high": high}
    return out
