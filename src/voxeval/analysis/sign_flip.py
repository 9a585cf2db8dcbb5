"""Paired sign-flip permutation test on per-unit differences (``scipy.stats.permutation_test``).

Under the null hypothesis "the condition has no effect", each scenario's difference is as
likely to be positive as negative, so every assignment of signs to the observed differences is
equally likely. The statistic is the absolute mean difference (two-sided); the p-value is the
share of sign assignments whose statistic is at least the observed one. The observed
assignment is one of them, so p is never 0.

With at most ``EXACT_MAX_UNITS`` units every one of the 2^n assignments is enumerated (exact
test). The limit, 13 units (8,192 assignments), is where enumeration stops being cheaper than
the Monte Carlo budget (scipy enumerates 2^16 in ~1 s; 9,999 random draws take ~0.05 s).
Above it, ``MONTE_CARLO_RESAMPLES`` random assignments are drawn from a seeded generator and
p = (hits + 1) / (resamples + 1), which counts the observed assignment too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
from scipy import stats

EXACT_MAX_UNITS = 13  # 2^13 = 8,192 assignments <= the 9,999 Monte Carlo draws
MONTE_CARLO_RESAMPLES = 9_999
METHOD_EXACT = "exact"
METHOD_MONTE_CARLO = "monte_carlo"


def _abs_mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # Summed in order of (|value|, value), so that the statistic of an assignment depends
    # neither on the order the units came in nor, to the last bit, on negating them all: the
    # ties between assignments that decide p are then exact.
    values = np.moveaxis(x, axis, -1)
    order = np.lexsort((values, np.abs(values)), axis=-1)
    by_size = np.take_along_axis(values, order, axis=-1)
    return np.asarray(np.abs(np.mean(by_size, axis=-1)))


class SignFlipResult(TypedDict):
    p_value: float
    method: str
    assignments: int  # sign assignments the p-value is over


def sign_flip_test(
    differences: Sequence[float],
    *,
    seed: int = 0,
    exact_max_units: int = EXACT_MAX_UNITS,
    resamples: int = MONTE_CARLO_RESAMPLES,
) -> SignFlipResult:
    """``{"p_value", "method", "assignments"}`` for the two-sided paired sign-flip test of
    ``differences`` (one per independent unit). ``assignments`` is how many sign assignments
    the p-value is over (2^n when exact, the resamples plus the observed one otherwise).
    Deterministic for a seed; raises ``ValueError`` on an empty sample."""
    d = np.asarray([float(x) for x in differences], dtype=np.float64)
    n = int(d.size)
    if n == 0:
        raise ValueError("sign_flip_test needs at least one difference")
    if n == 1:
        # Both signs give the same absolute mean: p = 2/2 (scipy needs two observations).
        return {"p_value": 1.0, "method": METHOD_EXACT, "assignments": 2}
    exact = n <= exact_max_units
    result = stats.permutation_test(
        (d,),
        _abs_mean,
        permutation_type="samples",  # one sample: the null flips the sign of each value
        vectorized=True,
        n_resamples=np.inf if exact else resamples,
        alternative="greater",  # |mean| is already two-sided
        random_state=np.random.default_rng(seed),  # scipy < 1.15 has no rng=
    )
    return {
        "p_value": float(result.pvalue),
        "method": METHOD_EXACT if exact else METHOD_MONTE_CARLO,
        "assignments": 2**n if exact else resamples + 1,
    }
