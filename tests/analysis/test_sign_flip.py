"""The paired sign-flip permutation test: hand-computed exact cases, Monte Carlo, properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis.sign_flip import MONTE_CARLO_RESAMPLES, sign_flip_test


@pytest.mark.parametrize(
    ("differences", "expected", "assignments"),
    [
        # 8 sign assignments of 1, 2, 3 have sums 6, 4, 2, 0, 0, -2, -4, -6: |sum| >= 6 twice.
        ([1.0, 2.0, 3.0], 2 / 8, 8),
        # sums of +-1 +-2 +-3 +-4 reach |10| only with all signs equal: 2 of 16.
        ([1.0, 2.0, 3.0, 4.0], 2 / 16, 16),
        # observed sum 0: every assignment is at least as extreme.
        ([1.0, -1.0], 1.0, 4),
        # |sum| is 2 whatever the sign: p = 4/4.
        ([2.0, 0.0], 1.0, 4),
        # +-3 +-1 +-1: |sums| 5, 3, 3, 1, 1, 3, 3, 5 -> observed 5 (3+1+1): 2 of 8.
        ([3.0, 1.0, 1.0], 2 / 8, 8),
        # observed 3-1-1 = 1: every |sum| >= 1, p = 1.
        ([3.0, -1.0, -1.0], 1.0, 8),
    ],
)
def test_exact_p_values_match_hand_enumeration(
    differences: list[float], expected: float, assignments: int
) -> None:
    result = sign_flip_test(differences)
    assert result["method"] == "exact"
    assert result["assignments"] == assignments
    assert result["p_value"] == pytest.approx(expected)


def test_single_difference_gives_p_one_and_empty_raises() -> None:
    assert sign_flip_test([0.7]) == {"p_value": 1.0, "method": "exact", "assignments": 2}
    with pytest.raises(ValueError):
        sign_flip_test([])


def test_monte_carlo_above_the_exact_limit_counts_the_observed_assignment() -> None:
    # 20 positive differences: only 2 of 2^20 assignments are as extreme, so the random
    # assignments (almost surely) hit none and p = 1 / (resamples + 1), never 0.
    differences = [1.0 + 0.1 * i for i in range(20)]
    result = sign_flip_test(differences, seed=5)
    assert result["method"] == "monte_carlo"
    assert result["assignments"] == MONTE_CARLO_RESAMPLES + 1
    assert result["p_value"] == pytest.approx(1 / (MONTE_CARLO_RESAMPLES + 1))


def test_monte_carlo_is_seeded_and_close_to_the_exact_value() -> None:
    rng = np.random.default_rng(11)
    differences = list(rng.normal(0.3, 1.0, size=14))
    exact = sign_flip_test(differences)["p_value"]
    first = sign_flip_test(differences, seed=2, exact_max_units=4)
    again = sign_flip_test(differences, seed=2, exact_max_units=4)
    assert first == again and first["method"] == "monte_carlo"
    # binomial standard error of a 9,999-draw estimate is <= 0.005
    assert first["p_value"] == pytest.approx(exact, abs=0.02)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=-100, max_value=100, allow_nan=False), min_size=1, max_size=10),
    st.randoms(use_true_random=False),
)
def test_p_in_unit_interval_and_invariant_to_scenario_order(
    differences: list[float], random: object
) -> None:
    p = sign_flip_test(differences)["p_value"]
    shuffled = list(differences)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert 0.0 < p <= 1.0
    assert sign_flip_test(shuffled)["p_value"] == pytest.approx(p, rel=1e-12)
    # flipping the sign of every difference mirrors the null distribution: same p
    assert sign_flip_test([-d for d in differences])["p_value"] == pytest.approx(p, rel=1e-12)
