from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis import metric_stats

# A clustered sample: a few queries, each spoken by several voices x trials.
cluster_lists = st.lists(
    st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=1, max_size=5),
    min_size=2,
    max_size=8,
)


def flatten(clusters: list[list[float]], copies: int = 1) -> tuple[list[float], list[str]]:
    values, keys = [], []
    for copy in range(copies):
        for i, cluster in enumerate(clusters):
            values += cluster
            keys += [f"q{i}-{copy}"] * len(cluster)
    return values, keys


def width(stat: dict[str, object]) -> float:
    low, high = stat["ci_low"], stat["ci_high"]
    assert isinstance(low, float) and isinstance(high, float)
    return high - low


def test_ci_contains_mean_and_narrows_with_n() -> None:
    rng = np.random.default_rng(0)
    widths = []
    for n in (10, 100, 1000):
        values = rng.normal(5.0, 2.0, n)
        stat = metric_stats(values, seed=1)
        assert stat["n"] == n == stat["clusters"] and stat["mean"] == pytest.approx(values.mean())
        assert stat["ci_low"] < stat["mean"] < stat["ci_high"]
        widths.append(width(stat))
    assert widths[0] > widths[1] > widths[2]
    # the 95% interval of a mean of N(5, 2) with n=1000 is about +-0.124
    assert widths[2] == pytest.approx(2 * 1.96 * 2.0 / np.sqrt(1000), rel=0.25)


def test_cluster_bootstrap_golden_three_queries() -> None:
    # Three queries of five voices each; voices of a query agree, queries differ. Resampling
    # three queries, the mean is 1 (all draws query 1) with probability 1/27 = 3.7% > 2.5%,
    # and 3 likewise, so the 95% percentile interval is exactly [1, 3].
    values = [1.0] * 5 + [2.0] * 5 + [3.0] * 5
    keys = ["a"] * 5 + ["b"] * 5 + ["c"] * 5
    clustered = metric_stats(values, clusters=keys, seed=0)
    assert clustered["mean"] == 2.0 and clustered["n"] == 15 and clustered["clusters"] == 3
    assert (clustered["ci_low"], clustered["ci_high"]) == (1.0, 3.0)
    # Treating the 15 values as independent gives about 2 +- 1.96 * 0.816 / sqrt(15) = +-0.41.
    naive = metric_stats(values, seed=0)
    assert naive["clusters"] == 15
    assert width(naive) == pytest.approx(2 * 1.96 * np.std(values) / np.sqrt(15), rel=0.2)
    assert width(clustered) > 2 * width(naive)


def test_cluster_bootstrap_golden_unequal_sizes() -> None:
    # Two clusters, sizes 1 and 3. Resamples: {A,A} -> 0, {A,B} -> 3/4, {B,B} -> 1, with
    # probabilities 1/4, 1/2, 1/4: the interval is [0, 1], the point estimate the plain mean.
    stat = metric_stats([0.0, 1.0, 1.0, 1.0], clusters=["a", "b", "b", "b"], seed=4)
    assert stat["mean"] == 0.75
    assert (stat["ci_low"], stat["ci_high"]) == (0.0, 1.0)


def test_degenerate_samples_report_no_interval() -> None:
    empty = metric_stats([])
    assert empty["mean"] is None and empty["n"] == 0 and empty["ci_low"] is None
    assert metric_stats([None, float("nan")])["n"] == 0
    one = metric_stats([7.0])
    assert one["mean"] == 7.0 and one["ci_low"] is one["ci_high"] is None
    assert one["ci_note"] == "too few clusters"
    equal = metric_stats([2, 2, 2])
    assert equal["mean"] == 2.0 and equal["ci_low"] is equal["ci_high"] is None
    assert equal["ci_note"] == "all values equal"
    single_query = metric_stats([1.0, 2.0, 3.0], clusters=["q", "q", "q"])
    assert single_query["ci_low"] is None and single_query["ci_note"] == "too few clusters"
    # Different values, but every query has the same mean: no between-query spread.
    flat = metric_stats([0.0, 1.0, 1.0, 0.0], clusters=["a", "a", "b", "b"])
    assert flat["ci_low"] is None and flat["ci_note"] == "all cluster means equal"
    assert metric_stats([True, False, None])["n"] == 2


def test_seeded_and_bca() -> None:
    values = [1, 4, 2, 8, 5, 7, 3, 3, 9, 1]
    assert metric_stats(values, seed=3) == metric_stats(values, seed=3)
    bca = metric_stats(values, seed=3, method="BCa")
    assert bca["ci_low"] <= bca["mean"] <= bca["ci_high"]
    keys = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"]
    clustered_bca = metric_stats(values, clusters=keys, seed=3, method="BCa")
    assert clustered_bca["ci_low"] <= clustered_bca["mean"] <= clustered_bca["ci_high"]


def test_cluster_keys_must_align() -> None:
    with pytest.raises(ValueError, match="2 values but 1 cluster keys"):
        metric_stats([1.0, 2.0], clusters=["a"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=30))
def test_interval_brackets_the_mean_or_says_why_not(values: list[float]) -> None:
    stat = metric_stats(values, seed=0, n_resamples=200)
    if stat["ci_low"] is None:
        assert stat["ci_note"] in ("too few clusters", "all values equal")
        assert len(values) == 1 or len(set(values)) == 1
    else:
        assert stat["ci_low"] <= stat["mean"] <= stat["ci_high"]
        assert stat["ci_low"] < stat["ci_high"]  # never a zero-width interval


@settings(max_examples=40, deadline=None)
@given(cluster_lists, st.integers(0, 2**16), st.randoms(use_true_random=False))
def test_clustered_interval_is_seeded_and_row_order_invariant(
    clusters: list[list[float]], seed: int, rnd: object
) -> None:
    values, keys = flatten(clusters)
    stat = metric_stats(values, clusters=keys, seed=seed, n_resamples=300)
    assert stat == metric_stats(values, clusters=keys, seed=seed, n_resamples=300)
    pairs = list(zip(values, keys, strict=True))
    rnd.shuffle(pairs)  # type: ignore[attr-defined]
    shuffled = metric_stats(
        [v for v, _ in pairs], clusters=[k for _, k in pairs], seed=seed, n_resamples=300
    )
    assert shuffled == stat
    if stat["ci_low"] is not None:
        assert stat["ci_low"] <= stat["mean"] <= stat["ci_high"]
        assert stat["mean"] == pytest.approx(float(np.mean(values)), abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(cluster_lists)
def test_duplicating_clusters_never_widens_the_interval(clusters: list[list[float]]) -> None:
    values, keys = flatten(clusters)
    base = metric_stats(values, clusters=keys, seed=0, n_resamples=1000)
    more_values, more_keys = flatten(clusters, copies=4)
    more = metric_stats(more_values, clusters=more_keys, seed=0, n_resamples=1000)
    assert more["clusters"] == 4 * base["clusters"]
    if base["ci_low"] is None:
        assert more["ci_low"] is None and more["ci_note"] == base["ci_note"]
    elif more["ci_low"] is not None:
        assert width(more) <= width(base) + 1e-9
    else:  # the spread shrank below float resolution
        assert more["ci_note"] == "all cluster means equal" and width(base) < 1e-9


@settings(max_examples=30, deadline=None)
@given(cluster_lists)
def test_clustered_interval_not_narrower_than_for_one_value_per_cluster(
    clusters: list[list[float]],
) -> None:
    # Repeating every value of a query (more voices saying the same) adds no information:
    # the cluster bootstrap over queries gives the interval of the query means.
    means = [sum(c) / len(c) for c in clusters]
    repeated = [[m] * 4 for m in means]
    values, keys = flatten(repeated)
    per_query = metric_stats(means, clusters=[f"q{i}-0" for i in range(len(means))], seed=2)
    clustered = metric_stats(values, clusters=keys, seed=2)
    if per_query["ci_low"] is None:
        assert clustered["ci_low"] is None
    else:
        assert clustered["ci_low"] == pytest.approx(per_query["ci_low"], abs=1e-9)
        assert clustered["ci_high"] == pytest.approx(per_query["ci_high"], abs=1e-9)
