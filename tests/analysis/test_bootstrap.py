from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis import metric_stats


def test_ci_contains_mean_and_narrows_with_n() -> None:
    rng = np.random.default_rng(0)
    widths = []
    for n in (10, 100, 1000):
        values = rng.normal(5.0, 2.0, n)
        stat = metric_stats(values, seed=1)
        assert stat["n"] == n and stat["mean"] == pytest.approx(values.mean())
        assert stat["ci_low"] < stat["mean"] < stat["ci_high"]
        widths.append(stat["ci_high"] - stat["ci_low"])
    assert widths[0] > widths[1] > widths[2]
    # the 95% interval of a mean of N(5, 2) with n=1000 is about +-0.124
    assert widths[2] == pytest.approx(2 * 1.96 * 2.0 / np.sqrt(1000), rel=0.25)


def test_degenerate_samples() -> None:
    assert metric_stats([]) == {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    assert metric_stats([None, float("nan")])["n"] == 0
    assert metric_stats([7.0]) == {"mean": 7.0, "ci_low": 7.0, "ci_high": 7.0, "n": 1}
    assert metric_stats([2, 2, 2]) == {"mean": 2.0, "ci_low": 2.0, "ci_high": 2.0, "n": 3}
    assert metric_stats([True, False, None])["n"] == 2


def test_seeded_and_bca() -> None:
    values = [1, 4, 2, 8, 5, 7, 3, 3, 9, 1]
    assert metric_stats(values, seed=3) == metric_stats(values, seed=3)
    bca = metric_stats(values, seed=3, method="BCa")
    assert bca["ci_low"] <= bca["mean"] <= bca["ci_high"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=30))
def test_interval_always_brackets_the_mean(values: list[float]) -> None:
    stat = metric_stats(values, seed=0, n_resamples=200)
    assert stat["ci_low"] <= stat["mean"] <= stat["ci_high"]
