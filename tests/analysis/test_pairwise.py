"""Win/tie/loss outcomes and win rates of one system against another."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis.pairwise import Outcome, compare_values, swapped, win_rate_stats


def test_direction_decides_the_winner() -> None:
    assert compare_values(8.0, 6.0, "higher") == "win"
    assert compare_values(6.0, 8.0, "higher") == "loss"
    assert compare_values(0.1, 0.3, "lower") == "win"  # WER: fewer errors wins
    assert compare_values(0.3, 0.1, "lower") == "loss"
    assert compare_values(0.5, 0.5, "lower") == "tie"
    assert compare_values(0.1 + 0.2, 0.3, "higher") == "tie"  # float rounding is no win


def test_an_unknown_direction_is_an_error() -> None:
    with pytest.raises(ValueError, match="higher"):
        compare_values(1.0, 2.0, "bigger")  # type: ignore[arg-type]


def test_golden_win_rate_counts_ties_as_half() -> None:
    # 3 wins, 2 ties, 1 loss over 6 independent outcomes: (3 + 2 * 0.5) / 6 = 2/3
    outcomes: list[Outcome] = ["win", "win", "tie", "loss", "win", "tie"]
    stat = win_rate_stats(outcomes, seed=1)
    assert stat["mean"] == pytest.approx(4 / 6)
    assert (stat["wins"], stat["ties"], stat["losses"], stat["n"]) == (3, 2, 1, 6)
    assert stat["ci_low"] < stat["mean"] < stat["ci_high"]


def test_golden_win_rate_resamples_clusters() -> None:
    # query q1: win, win; q2: loss, tie; q3: tie -> rate (1 + 1 + 0 + .5 + .5) / 5 = 0.6
    outcomes: list[Outcome] = ["win", "win", "loss", "tie", "tie"]
    stat = win_rate_stats(outcomes, clusters=["q1", "q1", "q2", "q2", "q3"], seed=0)
    assert stat["mean"] == pytest.approx(0.6)
    assert (stat["n"], stat["clusters"]) == (5, 3)


def test_all_ties_give_one_half_without_an_invented_interval() -> None:
    stat = win_rate_stats(["tie"] * 4, clusters=["a", "b", "c", "d"])
    assert stat["mean"] == 0.5 and stat["ci_low"] is None and stat["ci_note"]


outcome_lists = st.lists(st.sampled_from(["win", "tie", "loss"]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(outcomes=outcome_lists, n_clusters=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_swapping_a_and_b_gives_one_minus_the_rate(
    outcomes: list[Outcome], n_clusters: int, seed: int
) -> None:
    clusters = [f"q{i % n_clusters}" for i in range(len(outcomes))]
    forward = win_rate_stats(outcomes, clusters=clusters, seed=seed)
    backward = win_rate_stats([swapped(o) for o in outcomes], clusters=clusters, seed=seed)
    assert backward["mean"] == pytest.approx(1.0 - forward["mean"], abs=1e-12)
    assert (backward["wins"], backward["losses"]) == (forward["losses"], forward["wins"])
    if forward["ci_low"] is None:
        assert backward["ci_low"] is None
    else:  # the same resamples, mirrored: the interval mirrors too
        assert backward["ci_low"] == pytest.approx(1.0 - forward["ci_high"], abs=1e-9)
        assert backward["ci_high"] == pytest.approx(1.0 - forward["ci_low"], abs=1e-9)


@given(a=st.floats(-1e6, 1e6), b=st.floats(-1e6, 1e6), better=st.sampled_from(["higher", "lower"]))
def test_outcome_from_b_is_the_swapped_outcome_from_a(a: float, b: float, better: str) -> None:
    assert compare_values(b, a, better) == swapped(compare_values(a, b, better))  # type: ignore[arg-type]
