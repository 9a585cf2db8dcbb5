from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.arena_battles import battle
from voxeval.analysis.ratings.elo import expected_score, online_elo, replay_elo


def test_expected_score_formula() -> None:
    assert expected_score(1000, 1000) == 0.5
    # 400 points ahead: odds 10:1
    assert expected_score(1400, 1000) == pytest.approx(10 / 11)
    assert expected_score(1000, 1400) == pytest.approx(1 / 11)


def test_three_battles_by_hand() -> None:
    battles = [
        battle("A", "B", "a", order=0),
        battle("B", "C", "tie", order=1),
        battle("C", "A", "b", order=2),
    ]
    # 1) A beats B at equal ratings: E = 0.5, A +4*(1-0.5) = 1002, B = 998.
    # 2) B (998) ties C (1000): E_B = 1/(1+10^(2/400)) = 0.4971218; B += 4*(0.5-E_B).
    e_b = 1 / (1 + 10 ** (2 / 400))
    assert e_b == pytest.approx(0.4971218004)
    b_after = 998 + 4 * (0.5 - e_b)
    c_after = 1000 - 4 * (0.5 - e_b)
    assert (b_after, c_after) == pytest.approx((998.0115128, 999.9884872))
    # 3) A (1002) beats C (999.988...) shown as B: E_C = 1/(1+10^((1002-C)/400)); C loses.
    e_c = 1 / (1 + 10 ** ((1002 - c_after) / 400))
    expected = {"A": 1002 + 4 * e_c, "B": b_after, "C": c_after - 4 * e_c}
    assert expected == pytest.approx({"A": 1003.9884209, "B": 998.0115128, "C": 998.0000663})
    assert online_elo(battles) == pytest.approx(expected, abs=1e-9)


def test_battles_replayed_in_order_field() -> None:
    in_order = [battle("A", "B", "a", order=0), battle("A", "B", "b", order=1)]
    shuffled = [in_order[1], in_order[0]]
    assert online_elo(shuffled) == online_elo(in_order)
    # Elo is order-dependent: the later battle weighs on a moved rating.
    reversed_order = [battle("A", "B", "b", order=0), battle("A", "B", "a", order=1)]
    assert online_elo(reversed_order) != online_elo(in_order)


def test_unbattled_system_keeps_initial_and_parameters_apply() -> None:
    ratings = online_elo([battle("A", "B", "a")], systems=["Z"], initial=1500, k=32)
    assert ratings == {"A": 1516.0, "B": 1484.0, "Z": 1500.0}


outcomes = st.lists(
    st.tuples(
        st.sampled_from("ABCD"), st.sampled_from("ABCD"), st.sampled_from(["a", "b", "tie"])
    ).filter(lambda t: t[0] != t[1]),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(outcomes)
def test_elo_conserves_total_and_swapping_sides_is_neutral(rows: list) -> None:
    battles = [battle(a, b, w, order=i) for i, (a, b, w) in enumerate(rows)]
    ratings = online_elo(battles)
    assert math.fsum(ratings.values()) == pytest.approx(1000 * len(ratings))
    flip = {"a": "b", "b": "a", "tie": "tie"}
    swapped = [battle(b, a, flip[w], order=i) for i, (a, b, w) in enumerate(rows)]
    assert online_elo(swapped) == pytest.approx(ratings)


def test_scale_and_base_reach_the_replay() -> None:
    two = [battle("A", "B", "a", order=0), battle("A", "B", "a", order=1)]
    # second battle: E_A = 1 / (1 + 10^(-4/200)) = 0.5115109, A gains 4 * 0.4884891
    assert online_elo(two, scale=200.0)["A"] == pytest.approx(1003.953956, abs=1e-6)
    assert online_elo(two, scale=200.0) != online_elo(two)
    assert online_elo(two, base=math.e) == replay_elo(two, base=math.e)
