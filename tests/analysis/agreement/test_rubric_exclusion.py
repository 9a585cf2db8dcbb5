from __future__ import annotations

import pytest

from voxeval.analysis.agreement.rubric_exclusion import rubric_exclusion, rubric_exclusion_curve
from voxeval.analysis.rubric_values import RubricValue

SYSTEMS = ["s0", "s1", "s2", "s3"]
ITEMS = [f"i{n:02d}" for n in range(20)]


def planted() -> list[RubricValue]:
    """Criterion c0 drives the ranking: s_k meets it on round(20 k / 3) of the 20 items (0, 7,
    13, 20). Criteria c1..c4 order the systems the other way, weakly: s_k meets each on 3 - k
    items. Score x 5 = (0.60, 0.75, 0.85, 1.00) for k = 0..3, increasing; without c0 the
    scores decrease in k."""
    values = []
    for k, system in enumerate(SYSTEMS):
        for n, item in enumerate(ITEMS):
            values.append(RubricValue("judge", item, system, "c0", int(n < round(k * 20 / 3))))
            for c in range(1, 5):
                values.append(RubricValue("judge", item, system, f"c{c}", int(n < 3 - k)))
    return values


ARENA = {"s0": 900.0, "s1": 950.0, "s2": 1000.0, "s3": 1100.0}


def test_dropping_the_driving_criterion_reverses_the_ranking() -> None:
    result = rubric_exclusion(
        planted(), arena_ranking=ARENA, fraction=0.2, unit="criterion", resamples=2_000, seed=5
    )
    assert result["units"] == 5 and result["dropped_per_resample"] == 1
    scores = result["full_scores"]
    assert scores["s0"] < scores["s1"] < scores["s2"] < scores["s3"]
    assert scores["s3"] == pytest.approx((1 + 0) / 5)  # s3 meets c0 everywhere, c1..c4 nowhere
    # Each resample drops one of 5 criteria: rho = -1 when c0 goes (1 in 5), else +1,
    # so the mean rho is about 1 - 2/5.
    vs_full = result["vs_full"]
    assert vs_full["mean"] == pytest.approx(0.6, abs=0.06)
    assert (vs_full["ci_low"], vs_full["ci_high"]) == (-1.0, 1.0)
    assert vs_full["n_defined"] == 2_000
    vs_arena = result["vs_arena"]
    assert vs_arena["full_rho"] == pytest.approx(1.0)
    assert vs_arena["mean"] == pytest.approx(vs_full["mean"])
    assert vs_arena["systems"] == SYSTEMS


def test_reversed_arena_ranking_gives_negative_agreement() -> None:
    reversed_arena = {s: -v for s, v in ARENA.items()}
    result = rubric_exclusion(
        planted(), arena_ranking=reversed_arena, fraction=0.2, unit="criterion", resamples=500
    )
    assert result["vs_arena"]["full_rho"] == pytest.approx(-1.0)
    assert result["vs_arena"]["mean"] == pytest.approx(-result["vs_full"]["mean"])


def test_consistent_criteria_keep_the_ranking_whatever_is_dropped() -> None:
    values = [
        RubricValue("judge", item, system, f"c{c}", int(c < k + 1))
        for k, system in enumerate(SYSTEMS)
        for item in ITEMS[:3]
        for c in range(5)
    ]
    # s_k meets criteria c0..ck on every item: each system's met set contains the one below.
    light = rubric_exclusion(values, fraction=0.1, resamples=300)  # 2 of 15 cells dropped
    assert (light["vs_full"]["mean"], light["vs_full"]["ci_low"]) == (1.0, 1.0)
    assert light["vs_arena"] is None
    heavy = rubric_exclusion(values, fraction=0.9, resamples=300)  # 13 of 15 cells dropped
    assert heavy["vs_full"]["ci_low"] >= 0.0  # ties may appear, a reversal never
    assert heavy["vs_full"]["n_defined"] < 300  # all-equal scores have no rho


def test_seeded_and_curve_over_fractions() -> None:
    values = planted()
    first = rubric_exclusion(values, resamples=200, seed=2)
    assert rubric_exclusion(values, resamples=200, seed=2) == first
    assert first["unit"] == "item_criterion" and first["units"] == 100
    assert first["dropped_per_resample"] == 20
    curve = rubric_exclusion_curve(values, fractions=(0.1, 0.5), resamples=100)
    assert [row["fraction"] for row in curve] == [0.1, 0.5]


def test_invalid_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="fraction"):
        rubric_exclusion(planted(), fraction=1.0)
    with pytest.raises(ValueError, match="one rater"):
        rubric_exclusion([*planted(), RubricValue("other", "i00", "s0", "c0", 1)])
    with pytest.raises(ValueError, match="at least 2"):
        rubric_exclusion([RubricValue("j", "i", "s", "c", 1)], unit="criterion")


def test_row_spearman_matches_scipy() -> None:
    import numpy as np
    from scipy import stats

    from voxeval.analysis.agreement.rubric_exclusion import _spearman_rows

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(50, 6)).astype(float)  # ties on purpose
    reference = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 0.0])
    got = _spearman_rows(scores, reference)
    for row, rho in zip(scores, got, strict=True):
        if np.ptp(row) == 0:
            assert np.isnan(rho)
        else:
            assert rho == pytest.approx(stats.spearmanr(row, reference).statistic)


def test_duplicate_values_are_refused() -> None:
    values = [RubricValue("j", "i", "s", "c", 1), RubricValue("j", "i", "s", "c", 0)]
    with pytest.raises(ValueError, match="two values for system 's', item 'i', criterion 'c'"):
        rubric_exclusion(values)
