from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.arena_battles import battle
from voxeval.analysis.ratings.win_matrix import win_matrix


def test_win_matrix_counts_both_positions() -> None:
    battles = [
        battle("A", "B", "a"),
        battle("B", "A", "a"),  # B shown first, wins
        battle("B", "A", "b"),  # A shown second, wins
        battle("A", "B", "tie"),
        battle("A", "C", "b"),
    ]
    matrix = win_matrix(battles)
    assert matrix["A"]["B"] == {"wins": 2, "ties": 1, "losses": 1, "n": 4, "win_rate": 0.625}
    assert matrix["B"]["A"] == {"wins": 1, "ties": 1, "losses": 2, "n": 4, "win_rate": 0.375}
    assert matrix["C"]["A"]["win_rate"] == 1.0 and "C" not in matrix["B"]
    assert win_matrix([]) == {}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("ABC"), st.sampled_from("ABC"), st.sampled_from(["a", "b", "tie"])
        ).filter(lambda t: t[0] != t[1]),
        max_size=30,
    )
)
def test_win_matrix_is_antisymmetric(rows: list) -> None:
    matrix = win_matrix([battle(a, b, w) for a, b, w in rows])
    for x, row in matrix.items():
        for y, record in row.items():
            mirror = matrix[y][x]
            assert record["wins"] == mirror["losses"] and record["ties"] == mirror["ties"]
            assert record["win_rate"] + mirror["win_rate"] == pytest.approx(1.0)
    assert sum(r["n"] for row in matrix.values() for r in row.values()) == 2 * len(rows)
