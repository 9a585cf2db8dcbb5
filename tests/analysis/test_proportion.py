from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis import clustered_sample, design_effect, rate_stats, wilson_interval


def wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I,
# method 3 (score interval without continuity correction), to 4 decimals.
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)
    assert got == pytest.approx(wilson_by_hand(k, n), abs=1e-12)
    stat = rate_stats([1] * k + [0] * (n - k))
    assert (stat["ci_low"], stat["ci_high"]) == pytest.approx(got, abs=1e-12)
    assert stat["method"] == "wilson" and stat["design_effect"] == 1.0 and stat["n_eff"] == n


def test_all_passed_or_all_failed_still_has_an_interval() -> None:
    for outcomes, expected in (([1] * 10, (0.7225, 1.0)), ([0] * 10, (0.0, 0.2775))):
        stat = rate_stats(outcomes)
        assert (stat["ci_low"], stat["ci_high"]) == pytest.approx(expected, abs=5e-5)
    one = rate_stats([True])
    assert one["mean"] == 1.0 and one["ci_low"] == pytest.approx(0.2065, abs=5e-5)


def test_design_effect_by_hand() -> None:
    # Two scenarios of four trials, one always passes, one never: p = 1/2, cluster residuals
    # +-2, clustered variance (4 + 4) / 8^2 = 1/8, binomial variance 1/4 / 8 = 1/32: deff 4,
    # so the 8 trials count as 2 independent outcomes.
    outcomes = [1, 1, 1, 1, 0, 0, 0, 0]
    keys = ["a"] * 4 + ["b"] * 4
    assert design_effect(clustered_sample(outcomes, keys)) == pytest.approx(4.0)
    stat = rate_stats(outcomes, clusters=keys)
    assert stat["n_eff"] == pytest.approx(2.0) and stat["clusters"] == 2
    assert (stat["ci_low"], stat["ci_high"]) == pytest.approx(wilson_by_hand(1, 2), abs=1e-12)
    naive = rate_stats(outcomes)
    assert (naive["ci_low"], naive["ci_high"]) == pytest.approx(wilson_by_hand(4, 8))
    assert stat["ci_high"] - stat["ci_low"] > naive["ci_high"] - naive["ci_low"]


def test_design_effect_cases() -> None:
    # Trials that disagree inside every scenario carry no cluster effect: deff is floored at 1.
    mixed = clustered_sample([1, 0, 1, 0], ["a", "a", "b", "b"])
    assert design_effect(mixed) == 1.0
    # Every trial passed: the correlation cannot be estimated; assume the worst (n_eff = 3).
    all_pass = rate_stats([1] * 6, clusters=["a", "a", "b", "b", "c", "c"])
    assert all_pass["n_eff"] == 3.0 and all_pass["design_effect"] == 2.0
    assert all_pass["ci_low"] == pytest.approx(wilson_by_hand(3, 3)[0])
    single = rate_stats([1, 0, 1], clusters=["q", "q", "q"])
    assert single["n_eff"] == 1.0 and single["ci_low"] < single["mean"] < single["ci_high"]


def test_rates_need_binary_outcomes() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        rate_stats([0.5, 1.0])
    assert rate_stats([None, float("nan")])["n"] == 0
    assert rate_stats([True, None, False])["n"] == 2


clustered_outcomes = st.lists(
    st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=10
)


def flatten(clusters: list[list[bool]], copies: int = 1) -> tuple[list[bool], list[str]]:
    values, keys = [], []
    for copy in range(copies):
        for i, cluster in enumerate(clusters):
            values += cluster
            keys += [f"s{i}-{copy}"] * len(cluster)
    return values, keys


@settings(max_examples=60, deadline=None)
@given(clustered_outcomes, st.randoms(use_true_random=False))
def test_wilson_properties(clusters: list[list[bool]], rnd: object) -> None:
    values, keys = flatten(clusters)
    stat = rate_stats(values, clusters=keys)
    # a real interval around the rate, inside [0, 1], never zero width
    assert 0.0 <= stat["ci_low"] <= stat["mean"] <= stat["ci_high"] <= 1.0
    assert stat["ci_high"] - stat["ci_low"] > 0.0
    assert stat["mean"] == pytest.approx(sum(values) / len(values))
    assert stat["design_effect"] >= 1.0 and stat["n_eff"] <= stat["n"] + 1e-9
    # never narrower than the interval that treats every outcome as independent
    naive = rate_stats(values)
    assert stat["ci_high"] - stat["ci_low"] >= naive["ci_high"] - naive["ci_low"] - 1e-12
    # row order does not matter
    pairs = list(zip(values, keys, strict=True))
    rnd.shuffle(pairs)  # type: ignore[attr-defined]
    assert rate_stats([v for v, _ in pairs], clusters=[k for _, k in pairs]) == stat
    # duplicating every cluster never widens it
    more_values, more_keys = flatten(clusters, copies=3)
    more = rate_stats(more_values, clusters=more_keys)
    assert more["ci_high"] - more["ci_low"] <= stat["ci_high"] - stat["ci_low"] + 1e-12
