"""Rater quality control: golden values on hand-made labels."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from voxeval.raters.gold_check import gold_correct
from voxeval.raters.quality import (
    AGREEMENT_OUTLIER,
    FAILED_GOLD,
    GoldAnswer,
    Rating,
    assess_raters,
)
from voxeval.raters.study.study_files import StudyItem

TRUTH = ["x", "x", "y", "y", "x", "y", "x", "y", "x", "x"]
CONTRARIAN = ["y", "y", "x", "x", "y", "x", "y", "x", "x", "x"]  # agrees on items 9, 10 only


def _ratings(labels: dict[str, list[str]]) -> list[Rating]:
    out = []
    for rater, row in labels.items():
        out += [Rating(rater, f"i{n}", label, n) for n, label in enumerate(row, 1)]
    return out


def _arena_study():
    r3 = [*TRUTH[:9], "y"]  # differs from the others on item 10 only
    labels = {"r1": TRUTH, "r2": TRUTH, "r3": r3, "r4": CONTRARIAN}
    return assess_raters("arena", _ratings(labels))


def test_leave_one_out_agreement_and_kappa_golden() -> None:
    by = {r.rater_id: r for r in _arena_study().raters}
    # r1, r2 always side with the majority of the other three
    assert (by["r1"].agreed, by["r1"].compared) == (10, 10)
    assert by["r1"].kappa == pytest.approx(1.0)
    # r3 leaves the majority on item 10 (others: x, x, x)
    assert (by["r3"].agreed, by["r3"].compared) == (9, 10)
    # r4 vs the others' majority (= TRUTH): po = 0.2; both raters 6 x / 4 y -> pe = 0.52
    assert (by["r4"].agreed, by["r4"].compared) == (2, 10)
    assert by["r4"].kappa == pytest.approx((0.2 - 0.52) / (1 - 0.52))  # -2/3


def test_binomial_outlier_with_holm_flags_only_the_contrarian() -> None:
    quality = _arena_study()
    by = {r.rater_id: r for r in quality.raters}
    # null: the agreement rate of the other three raters pooled (10 + 10 + 9 of 30)
    assert by["r4"].pool_agreement == pytest.approx(29 / 30)
    assert by["r4"].p_value == pytest.approx(binom.cdf(2, 10, 29 / 30))
    assert by["r4"].p_holm == pytest.approx(min(1.0, 4 * binom.cdf(2, 10, 29 / 30)))
    assert by["r3"].pool_agreement == pytest.approx(22 / 30)
    assert by["r3"].p_value == pytest.approx(1 - (22 / 30) ** 10)
    assert by["r4"].flags == (AGREEMENT_OUTLIER,)
    assert quality.flagged() == {"r4"}
    assert not by["r1"].flagged and not by["r3"].flagged


def test_fleiss_kappa_golden_table() -> None:
    """The classic 10 subjects x 14 raters x 5 categories example: kappa = 0.210."""
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    ratings = []
    for subject, counts in enumerate(table):
        rater = 0
        for category, count in enumerate(counts):
            for _ in range(count):
                ratings.append(Rating(f"r{rater}", f"s{subject}", category, rater))
                rater += 1
    quality = assess_raters("arena", ratings)
    assert quality.fleiss_kappa == pytest.approx(0.2099, abs=5e-4)
    assert (quality.fleiss_units, quality.fleiss_ratings_per_unit) == (10, 14)


def test_fleiss_uses_the_most_common_count_and_first_ratings() -> None:
    labels = {"a": ["x", "y", "x"], "b": ["x", "y", "y"], "c": ["y"]}  # c rated item 1 last
    ratings = _ratings(labels)
    quality = assess_raters("arena", ratings)
    # counts per item: 3, 2, 2 -> k = 2; item 1 uses a, b (x, x): rows (x,x) (y,y) (x,y)
    # p_x = 3/6, p_y = 3/6 -> Pe = 0.5; P_i = 1, 1, 0 -> P = 2/3; kappa = (2/3 - .5) / .5
    assert quality.fleiss_ratings_per_unit == 2 and quality.fleiss_units == 3
    assert quality.fleiss_kappa == pytest.approx(1 / 3)


def test_scores_agree_within_one_point_of_the_others_median() -> None:
    ratings = [
        Rating("r1", "i1", 5), Rating("r2", "i1", 6), Rating("r3", "i1", 9),
        Rating("r1", "i2", 2), Rating("r2", "i2", 2), Rating("r3", "i2", 3),
    ]  # fmt: skip
    by = {r.rater_id: r for r in assess_raters("score", ratings).raters}
    # i1: r1 vs median_low(6, 9) = 6 (agrees), r2 vs 5 (agrees), r3 vs 5 (off by 4)
    assert (by["r1"].agreed, by["r2"].agreed, by["r3"].agreed) == (2, 2, 1)
    assert by["r3"].compared == 2


def test_failed_gold_flag_needs_enough_gold_answers() -> None:
    ratings = _ratings({"r1": TRUTH, "r2": TRUTH})
    gold = [
        GoldAnswer("r1", "g1", False), GoldAnswer("r1", "g2", False),
        GoldAnswer("r2", "g1", False), GoldAnswer("r2", "g2", True), GoldAnswer("r2", "g3", True),
    ]  # fmt: skip
    by = {r.rater_id: r for r in assess_raters("arena", ratings, gold).raters}
    assert by["r1"].gold_accuracy == 0.0 and by["r1"].flags == (FAILED_GOLD,)
    assert by["r2"].gold_accuracy == pytest.approx(2 / 3) and not by["r2"].flagged
    one = assess_raters("arena", ratings, [GoldAnswer("r1", "g1", False)]).raters
    assert not one[0].flagged  # a single miss is not enough to flag


def _gold_item(gold: dict, **extra) -> StudyItem:
    return StudyItem(item_id="g", kind="gold", title="t", gold=gold, **extra)


def test_gold_answers_are_checked_by_system_not_side() -> None:
    arena = _gold_item({"choice": "b"}, systems={"a": "s1", "b": "s2"})
    # shown swapped (s2 as A): the answer names the system, so the swap does not matter
    assert gold_correct(arena, {"choice": "a", "first": "s2", "second": "s1", "winner": "s2"})
    assert not gold_correct(arena, {"winner": "s1"})
    assert not gold_correct(arena, {"winner": "tie"})
    rubric = _gold_item({"criteria": {"c1": 0, "c2": 0}})
    assert gold_correct(rubric, {"criteria": {"c1": 0, "c2": 0}})
    assert not gold_correct(rubric, {"criteria": {"c1": 0, "c2": 1}})
    score = _gold_item({"min": 1, "max": 2})
    assert gold_correct(score, {"score": 2}) and not gold_correct(score, {"score": 3})
    assert gold_correct(StudyItem(item_id="n", title="t"), {"score": 3}) is None
