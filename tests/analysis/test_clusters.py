"""Clusters come out in a canonical order, whatever the order or types of their keys."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from voxeval.analysis.clusters import clustered_sample


def test_text_keys_sort_as_text_and_sum_per_cluster() -> None:
    sample = clustered_sample([1.0, 2.0, 4.0, None, 8.0], ["q2", "q10", "q2", "q3", "q1"])
    # "q1" < "q10" < "q2" (text order); q3's only value is missing, so q3 is gone
    assert sample.totals.tolist() == [8.0, 2.0, 5.0]
    assert sample.sizes.tolist() == [1.0, 1.0, 2.0]
    assert sample.n == 4 and sample.mean == 15.0 / 4


def test_keys_of_mixed_types_order_by_text_then_repr() -> None:
    sample = clustered_sample([1.0, 2.0, 3.0], [2, "2", "10"])
    # str: "10" < "2" == "2"; the tie goes to repr: "'2'" < "2"
    assert sample.totals.tolist() == [3.0, 2.0, 1.0]


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "q1", "q10"]), st.floats(-5, 5)),
        min_size=1,
        max_size=30,
    ),
    st.randoms(use_true_random=False),
)
def test_the_order_of_the_rows_does_not_change_the_clusters(
    rows: list[tuple[str, float]], shuffler: object
) -> None:
    shuffled = list(rows)
    shuffler.shuffle(shuffled)  # type: ignore[attr-defined]
    a = clustered_sample([v for _, v in rows], [k for k, _ in rows])
    b = clustered_sample([v for _, v in shuffled], [k for k, _ in shuffled])
    assert np.array_equal(a.totals, b.totals) and np.array_equal(a.sizes, b.sizes)
    keys = sorted({k for k, _ in rows}, key=lambda k: (str(k), repr(k)))
    assert a.sizes.tolist() == [sum(1 for k, _ in rows if k == key) for key in keys]
