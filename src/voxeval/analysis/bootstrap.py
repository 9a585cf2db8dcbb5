"""Mean with a bootstrap confidence interval (scipy.stats.bootstrap), safe on tiny samples.

Degenerate samples have no sampling spread to estimate, so instead of letting scipy return NaN
(or warn) we report the interval as the mean itself: n = 1, or every value identical. An empty
sample gives ``mean = ci_low = ci_high = None`` and ``n = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
from scipy import stats

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95

_MAX_BATCH_VALUES = 4_000_000

Stat = dict[str, Any]
"""``{"mean": float | None, "ci_low": float | None, "ci_high": float | None, "n": int}``"""


def _clean(values: Iterable[float | int | bool | None]) -> np.ndarray:
    kept = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return np.asarray(kept, dtype=np.float64)


def metric_stats(
    values: Iterable[float | int | bool | None],
    *,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    method: Literal["percentile", "BCa", "basic"] = "percentile",
) -> Stat:
    """Mean and bootstrap CI of ``values`` (None/NaN dropped). Deterministic for a seed."""
    data = _clean(values)
    n = int(data.size)
    if n == 0:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    mean = float(data.mean())
    if n == 1 or bool(np.all(data == data[0])):
        return {"mean": mean, "ci_low": mean, "ci_high": mean, "n": n}
    result = stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method=method,
        vectorized=True,
        batch=max(1, _MAX_BATCH_VALUES // n),  # bounds memory: batch x n floats at a time
        random_state=np.random.default_rng(seed),
    )
    low = float(result.confidence_interval.low)
    high = float(result.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        # BCa can fail on very skewed small samples; the percentile interval always exists.
        return metric_stats(data, seed=seed, n_resamples=n_resamples, confidence=confidence)
    return {"mean": mean, "ci_low": min(low, mean), "ci_high": max(high, mean), "n": n}
