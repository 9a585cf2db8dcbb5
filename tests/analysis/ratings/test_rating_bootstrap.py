from __future__ import annotations

import numpy as np
import pytest

from voxeval.analysis.ratings.rating_bootstrap import cluster_bootstrap, percentile_interval


def test_weights_count_item_draws_and_rounds_are_seeded() -> None:
    # Five battles on three items: a battle's weight is how often its item was drawn.
    item_index = np.array([0, 0, 1, 2, 2])
    seen: list[np.ndarray] = []

    def record(weights: np.ndarray) -> np.ndarray:
        seen.append(weights)
        return np.array([weights.sum()])

    draws = cluster_bootstrap(item_index, 3, record, n_resamples=50, seed=4)
    assert draws.rounds == 50 and draws.dropped == 0 and draws.estimates.shape == (50, 1)
    for weights in seen:
        assert weights[0] == weights[1] and weights[3] == weights[4]
        assert weights[0] + weights[2] + weights[3] == 3  # three items drawn per round
    again = cluster_bootstrap(item_index, 3, record, n_resamples=50, seed=4)
    assert np.array_equal(again.estimates, draws.estimates)


def test_undefined_rounds_are_dropped_and_counted() -> None:
    def only_when_item_0_drawn(weights: np.ndarray) -> np.ndarray | None:
        return None if weights[0] == 0 else np.array([1.0])

    draws = cluster_bootstrap(np.array([0, 1]), 2, only_when_item_0_drawn, n_resamples=400)
    # item 0 is missing from a draw of two with probability 1/4
    assert draws.dropped + len(draws.estimates) == 400
    assert 0.17 < draws.dropped / 400 < 0.33


def test_percentile_interval_golden() -> None:
    estimates = np.arange(101, dtype=float).reshape(-1, 1) * np.array([1.0, -1.0])
    low, high = percentile_interval(estimates, 0.9)
    assert low == pytest.approx([5.0, -95.0]) and high == pytest.approx([95.0, -5.0])
