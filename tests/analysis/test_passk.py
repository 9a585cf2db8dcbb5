from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voxeval.analysis import (
    metric_stats,
    pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
    pass_hat_k_curve,
    passk_summary,
)


@st.composite
def trials(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=40))
    c = draw(st.integers(min_value=0, max_value=n))
    return n, c


def test_known_values() -> None:
    # n=5, c=2: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4) == pass_hat_k(5, 2, 1)
    assert pass_at_k(5, 2, 4) == 1.0  # fewer than k failures: some pass is certain
    assert pass_hat_k(5, 2, 3) == 0.0


def test_large_n_is_exact() -> None:
    # C(200, 100) overflows floats' exact range; the Fraction path must stay finite and exact
    assert pass_hat_k(200, 199, 100) == pytest.approx(0.5)
    assert math.isfinite(pass_at_k(200, 1, 100))


@given(trials())
def test_curves_are_monotone_and_ordered(nc: tuple[int, int]) -> None:
    n, c = nc
    at, hat = pass_at_k_curve(n, c), pass_hat_k_curve(n, c)
    assert len(at) == len(hat) == n
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(at))
    assert all(a + 1e-12 >= b for a, b in itertools.pairwise(hat))
    assert at[0] == pytest.approx(c / n) == pytest.approx(hat[0])
    for k in range(n):
        assert hat[k] <= at[0] + 1e-12 <= at[k] + 2e-12
        assert 0.0 <= hat[k] <= 1.0 and 0.0 <= at[k] <= 1.0


@given(st.integers(min_value=1, max_value=30))
def test_edge_cases(n: int) -> None:
    assert pass_at_k_curve(n, 0) == [0.0] * n and pass_hat_k_curve(n, 0) == [0.0] * n
    assert pass_at_k_curve(n, n) == [1.0] * n and pass_hat_k_curve(n, n) == [1.0] * n


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


def test_summary_averages_scenarios_with_cis() -> None:
    outcomes = {
        "s1": [True, True, True, True],
        "s2": [True, False, True, False],
        "s3": [False, False, False, False],
        "s4": [True, True, False, True],
    }
    summary = passk_summary(outcomes, seed=1)
    assert summary["n_trials"] == 4 and summary["n_scenarios"] == 4
    at, hat = summary["pass_at_k"], summary["pass_hat_k"]
    assert isinstance(at, list) and isinstance(hat, list)
    assert [p["k"] for p in at] == [1, 2, 3, 4]
    assert at[0]["mean"] == pytest.approx((1 + 0.5 + 0 + 0.75) / 4)
    assert at[-1]["mean"] == pytest.approx(0.75)  # any scenario with one pass
    assert hat[-1]["mean"] == pytest.approx(0.25)  # only s1 passes every trial
    for point in at + hat:
        assert point["ci_low"] <= point["mean"] <= point["ci_high"] and point["n"] == 4
    assert passk_summary(outcomes, seed=1) == summary  # seeded
    assert passk_summary({}) == {"pass_at_k": [], "pass_hat_k": [], "n_trials": 0, "n_scenarios": 0}


def test_summary_resamples_scenarios_not_trials() -> None:
    # The scenario is the unit: a scenario run 12 times counts once, like one run 3 times.
    few = {"s1": [True, False, False], "s2": [True, True, True], "s3": [False] * 3}
    many = {**few, "s1": [True, False, False] * 4}
    for outcomes in (few, many):
        summary = passk_summary(outcomes, seed=5)
        point = summary["pass_at_k"][0]  # type: ignore[index]
        assert point["n"] == 3 and point["clusters"] == 3
        assert point["mean"] == pytest.approx((1 / 3 + 1 + 0) / 3)
        expected = metric_stats([1 / 3, 1.0, 0.0], clusters=["s1", "s2", "s3"], seed=5)
        assert {k: v for k, v in point.items() if k != "k"} == expected
    # Scenario order does not change the interval.
    reordered = dict(reversed(list(few.items())))
    assert passk_summary(reordered, seed=5) == passk_summary(few, seed=5)


def test_summary_without_spread_reports_no_interval() -> None:
    # Every scenario passes every trial: no spread over scenarios to resample.
    summary = passk_summary({"s1": [True, True], "s2": [True, True]}, seed=0)
    for point in summary["pass_at_k"] + summary["pass_hat_k"]:  # type: ignore[operator]
        assert point["mean"] == 1.0 and point["ci_low"] is None
        assert point["ci_note"] == "all values equal"
    one = passk_summary({"s1": [True, False]}, seed=0)
    assert one["pass_at_k"][0]["ci_note"] == "too few clusters"  # type: ignore[index]
