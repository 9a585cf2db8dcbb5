from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voxeval.analysis import (
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
