from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis.ratings.rank_intervals import RankInterval, rank_intervals


def test_rank_interval_golden() -> None:
    intervals = {
        "A": (1100.0, 1200.0),
        "B": (1050.0, 1150.0),
        "C": (900.0, 1000.0),
        "D": (950.0, 1060.0),
    }
    # A: nobody's low > 1200 -> rank 1; C (high 1000) and D (1060) lie below 1100 -> worst 2.
    # B: rank 1; only C lies below 1050 -> worst 3.
    # C: A, B lie wholly above 1000 (D's low 950 does not) -> rank 3; nobody below -> worst 4.
    # D: only A's low 1100 exceeds 1060 -> rank 2; nobody below 950 -> worst 4.
    assert rank_intervals(intervals) == {
        "A": RankInterval(1, 1, 2),
        "B": RankInterval(1, 1, 3),
        "C": RankInterval(3, 3, 4),
        "D": RankInterval(2, 2, 4),
    }


def test_separated_and_identical_intervals() -> None:
    separated = rank_intervals({"a": (3.0, 4.0), "b": (1.0, 2.0), "c": (-1.0, 0.0)})
    assert [separated[s] for s in "abc"] == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]
    same = rank_intervals({"a": (0.0, 1.0), "b": (0.0, 1.0)})
    assert same == {"a": (1, 1, 2), "b": (1, 1, 2)}


def test_inverted_interval_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'a' has ci_low 2\.0 above ci_high 1\.0"):
        rank_intervals({"a": (2.0, 1.0)})


bounds = st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(0, 500)), min_size=1, max_size=8).map(
    lambda rows: {f"s{i}": (low, low + width) for i, (low, width) in enumerate(rows)}
)


@settings(max_examples=100, deadline=None)
@given(bounds)
def test_rank_interval_properties(intervals: dict[str, tuple[float, float]]) -> None:
    ranks = rank_intervals(intervals)
    n = len(intervals)
    for name, (rank, best, worst) in ranks.items():
        assert rank == best and 1 <= best <= worst <= n
        # a system wholly above another ranks strictly better at both ends of the interval
        for other, (_, other_high) in intervals.items():
            if intervals[name][0] > other_high:
                assert best < ranks[other].best and worst < ranks[other].worst
