"""Cluster bootstrap of a rating fit: resample the compared items (dialogues), refit.

Battles about the same dialogue share its content (and usually its two judged orders), so they
are not independent; the dialogue is the unit drawn with replacement. A round draws as many
items as there are, gives each battle the number of times its item was drawn as a weight, and
refits. A round whose fit is undefined (e.g. a system lost all its battles from the resample,
or the comparison graph fell apart) is dropped and counted, never filled with a default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

DEFAULT_RATING_RESAMPLES = 1000


@dataclass(frozen=True)
class BootstrapDraws:
    estimates: np.ndarray  # rounds_used x parameters
    rounds: int
    dropped: int


def cluster_bootstrap(
    item_index: np.ndarray,
    n_items: int,
    fit: Callable[[np.ndarray], np.ndarray | None],
    *,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
) -> BootstrapDraws:
    """Run ``fit(battle_weights)`` on ``n_resamples`` item resamples (seeded)."""
    rng = np.random.default_rng(seed)
    estimates: list[np.ndarray] = []
    dropped = 0
    # The fits are tiny: BLAS threads only contend for the cores (measured 10-20x slower
    # on a loaded 2-core machine), so the rounds run single-threaded.
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(n_resamples):
            drawn = np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
            estimate = fit(drawn[item_index].astype(float))
            if estimate is None:
                dropped += 1
            else:
                estimates.append(estimate)
    width = 0 if not estimates else len(estimates[0])
    stacked = np.array(estimates) if estimates else np.empty((0, width))
    return BootstrapDraws(estimates=stacked, rounds=n_resamples, dropped=dropped)


def percentile_interval(estimates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-parameter percentile interval of the bootstrap estimates."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(estimates, [tail, 1.0 - tail], axis=0)
    return low, high
