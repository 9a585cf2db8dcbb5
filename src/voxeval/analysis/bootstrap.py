"""Mean with a cluster-bootstrap confidence interval (``scipy.stats.bootstrap``).

The point estimate is the plain mean of the unit values. The interval resamples whole clusters
(the protocol's independent unit: a query with all its voices, conditions and trials; a scenario
with all its trials): each resample draws clusters with replacement and takes the mean over
every value they hold, i.e. sum of cluster totals / sum of cluster sizes. Without cluster keys
every value is its own cluster, which is the ordinary bootstrap of the mean.

No interval is invented where the data cannot give one: with fewer than two clusters, with
every value equal, or when every resample gives the same mean, ``ci_low``/``ci_high`` are None
and ``ci_note`` says why. An empty sample gives ``mean = None`` and ``n = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal

import numpy as np
from scipy import stats

from voxeval.analysis.clusters import ClusteredSample, Value, clustered_sample

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
BOOTSTRAP_METHOD = "cluster_bootstrap"

NOTE_NO_VALUES = "no values"
NOTE_TOO_FEW_CLUSTERS = "too few clusters"
NOTE_ALL_EQUAL = "all values equal"
NOTE_NO_SPREAD = "all cluster means equal"

_MAX_BATCH_VALUES = 4_000_000

Stat = dict[str, Any]
"""``{"mean", "ci_low", "ci_high", "n", "clusters", "method"}`` plus ``"ci_note"`` when there
is no interval (and ``"n_eff"``, ``"design_effect"`` for Wilson rates)."""


def no_interval(sample: ClusteredSample, method: str, note: str) -> Stat:
    return {
        "mean": sample.mean,
        "ci_low": None,
        "ci_high": None,
        "n": sample.n,
        "clusters": sample.n_clusters,
        "method": method,
        "ci_note": note,
    }


def _ratio_of_sums(totals: np.ndarray, sizes: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(totals.sum(axis=axis) / sizes.sum(axis=axis))


def _bootstrap_interval(
    sample: ClusteredSample,
    *,
    seed: int,
    n_resamples: int,
    confidence: float,
    method: Literal["percentile", "BCa", "basic"],
) -> tuple[float, float]:
    if np.all(sample.sizes == sample.sizes[0]):
        # Equal cluster sizes: the mean over units is the mean of cluster means (cheaper).
        data: tuple[np.ndarray, ...] = (sample.totals / sample.sizes,)
        statistic: Any = np.mean
    else:
        # paired=True resamples cluster indices and applies them to totals and sizes together.
        data, statistic = (sample.totals, sample.sizes), _ratio_of_sums
    result = stats.bootstrap(
        data,
        statistic,
        paired=len(data) == 2,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method=method,
        batch=max(1, _MAX_BATCH_VALUES // sample.n_clusters),  # bounds memory per batch
        random_state=np.random.default_rng(seed),  # scipy < 1.15 has no rng=
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def metric_stats(
    values: Iterable[Value],
    *,
    clusters: Sequence[Hashable] | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    method: Literal["percentile", "BCa", "basic"] = "percentile",
) -> Stat:
    """Mean of ``values`` (None/NaN dropped) with a cluster-bootstrap CI; ``clusters`` gives
    each value's independent unit (None = every value independent). Deterministic for a seed
    and independent of the order of the values."""
    values = list(values)
    sample = clustered_sample(values, clusters)
    if sample.n == 0:
        return no_interval(sample, BOOTSTRAP_METHOD, NOTE_NO_VALUES)
    if sample.n_clusters < 2:
        return no_interval(sample, BOOTSTRAP_METHOD, NOTE_TOO_FEW_CLUSTERS)
    if sample.all_equal:
        return no_interval(sample, BOOTSTRAP_METHOD, NOTE_ALL_EQUAL)
    means = sample.totals / sample.sizes
    if np.ptp(means) == 0:
        # Every resample has the same mean (equal cluster means, equal or not sizes).
        return no_interval(sample, BOOTSTRAP_METHOD, NOTE_NO_SPREAD)
    low, high = _bootstrap_interval(
        sample, seed=seed, n_resamples=n_resamples, confidence=confidence, method=method
    )
    if not (math.isfinite(low) and math.isfinite(high)):
        # BCa can fail on very skewed or tiny samples; the percentile interval always exists.
        return metric_stats(
            values,
            clusters=clusters,
            seed=seed,
            n_resamples=n_resamples,
            confidence=confidence,
        )
    mean = float(sample.mean)  # type: ignore[arg-type]
    low, high = min(low, mean), max(high, mean)
    if high - low <= 1e-12 * max(abs(low), abs(high)):  # only rounding noise left
        return no_interval(sample, BOOTSTRAP_METHOD, NOTE_NO_SPREAD)
    return {
        "mean": mean,
        "ci_low": low,
        "ci_high": high,
        "n": sample.n,
        "clusters": sample.n_clusters,
        "method": BOOTSTRAP_METHOD,
    }
