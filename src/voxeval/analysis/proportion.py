"""Pass/fail rates with a Wilson interval on the effective number of independent units.

Outcomes of one cluster (a query's voices and trials, a scenario's trials) are correlated, so
n correlated outcomes carry the information of fewer independent ones. The design effect
(Kish) measures this: the variance of the rate under cluster sampling (the linearised variance
of a ratio of cluster sums) divided by the binomial variance p(1 - p)/n. The Wilson interval
(``statsmodels`` ``proportion_confint``) is then computed with ``n_eff = n / deff`` trials and
``p * n_eff`` successes. ``deff`` is never taken below 1 (the interval is never narrower than
treating every outcome as independent). When it cannot be estimated - one cluster only, or every
outcome the same (p = 0 or 1) - the worst case is assumed: outcomes of a cluster identical
(intra-cluster correlation 1), so ``n_eff`` = the number of clusters.

Unlike the bootstrap, Wilson gives a real interval for p = 0 or 1 and for tiny n.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

from statsmodels.stats.proportion import proportion_confint

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, NOTE_NO_VALUES, Stat, no_interval
from voxeval.analysis.clusters import ClusteredSample, Value, clustered_sample

WILSON_METHOD = "wilson"


def is_binary(values: Iterable[Value]) -> bool:
    """True when every present value is 0 or 1 (None/NaN ignored)."""
    return all(v is None or v != v or float(v) in (0.0, 1.0) for v in values)


def wilson_interval(
    successes: float, n: float, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``n`` (both may be fractional)."""
    alpha = round(1.0 - confidence, 12)  # 1 - 0.95 is 0.050000000000000044 in floats
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return float(low), float(high)


def design_effect(sample: ClusteredSample) -> float:
    """Variance inflation of the rate due to clustering (>= 1; see the module doc)."""
    n, clusters = sample.n, sample.n_clusters
    if clusters == n:
        return 1.0  # every outcome its own cluster: the binomial case exactly
    p = float(sample.mean)  # type: ignore[arg-type]
    if clusters < 2 or p <= 0.0 or p >= 1.0:
        return n / clusters
    residual = sample.totals - p * sample.sizes
    clustered_variance = float((residual**2).sum()) / n**2
    binomial_variance = p * (1.0 - p) / n
    return max(1.0, clustered_variance / binomial_variance)


def rate_stats(
    outcomes: Iterable[Value],
    *,
    clusters: Sequence[Hashable] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Stat:
    """Rate of ``outcomes`` (each 0/1 or bool; None/NaN dropped) with a Wilson interval on the
    effective n of the clustering ``clusters`` (None = every outcome independent)."""
    outcomes = list(outcomes)
    sample = clustered_sample(outcomes, clusters)
    if sample.n == 0:
        return no_interval(sample, WILSON_METHOD, NOTE_NO_VALUES)
    if not is_binary(outcomes):
        raise ValueError("a rate needs outcomes that are 0 or 1 (or None for missing)")
    deff = design_effect(sample)
    n_eff = sample.n / deff
    rate = float(sample.mean)  # type: ignore[arg-type]
    low, high = wilson_interval(rate * n_eff, n_eff, confidence)
    return {
        "mean": rate,
        "ci_low": min(low, rate),
        "ci_high": max(high, rate),
        "n": sample.n,
        "clusters": sample.n_clusters,
        "method": WILSON_METHOD,
        "n_eff": n_eff,
        "design_effect": deff,
    }
