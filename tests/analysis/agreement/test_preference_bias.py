from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from voxeval.analysis.agreement.preference_bias import (
    bias_summary,
    length_bias,
    length_verdict,
    position_bias,
    preference_bias,
)
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement


def vote(item: str, first: str, second: str, winner: str | None, lengths=(None, None), rater="j"):
    return PairwiseJudgement(rater, item, first, second, winner, lengths[0], lengths[1])


def top_bottom(top_wins: int, bottom_wins: int, ties: int = 0) -> list[PairwiseJudgement]:
    rows = [vote(f"t{i}", "a", "b", "a") for i in range(top_wins)]
    rows += [vote(f"b{i}", "a", "b", "b") for i in range(bottom_wins)]
    rows += [vote(f"x{i}", "a", "b", None) for i in range(ties)]
    return rows


def test_position_rates_wilson_and_exact_p_by_hand() -> None:
    result = position_bias(top_bottom(7, 3, ties=2), cluster_of=None)
    assert result["n"] == 10 and result["n_ties"] == 2
    assert result["p1"]["rate"] == pytest.approx(0.7)
    assert result["p2"]["rate"] == pytest.approx(0.3)
    assert result["delta"] == pytest.approx(0.4)
    low, high = proportion_confint(7, 10, alpha=0.05, method="wilson")
    assert (result["p1"]["ci_low"], result["p1"]["ci_high"]) == pytest.approx((low, high))
    low, high = proportion_confint(3, 10, alpha=0.05, method="wilson")
    assert (result["p2"]["ci_low"], result["p2"]["ci_high"]) == pytest.approx((low, high))
    # 10 comparisons: all 2^10 relabellings enumerated; |Delta| >= 0.4 <=> 7+ of 10 on one side
    assert result["test"]["method"] == "exact"
    assert result["p_value"] == pytest.approx(2 * (120 + 45 + 10 + 1) / 1024)
    assert result["p_value"] == pytest.approx(stats.binomtest(7, 10).pvalue)
    assert result["significant"] is False


def test_ties_counted_in_n_shrink_delta_not_the_test() -> None:
    result = position_bias(top_bottom(7, 3, ties=2), cluster_of=None, ties="count")
    assert result["n"] == 12
    assert result["p1"]["rate"] == pytest.approx(7 / 12)
    assert result["p2"]["rate"] == pytest.approx(3 / 12)
    assert result["delta"] == pytest.approx(4 / 12)
    low, high = proportion_confint(7, 12, alpha=0.05, method="wilson")
    assert (result["p1"]["ci_low"], result["p1"]["ci_high"]) == pytest.approx((low, high))
    assert result["p_value"] == pytest.approx(2 * 176 / 1024)  # a tie never moves Delta


def test_planted_strong_position_bias_is_significant() -> None:
    rng = np.random.default_rng(3)
    rows = [
        vote(f"i{i}", "a", "b", "a" if top else "b") for i, top in enumerate(rng.random(200) < 0.85)
    ]
    result = position_bias(rows, seed=1)
    assert result["test"]["method"] == "monte_carlo"
    assert result["test"]["assignments"] == 10_001
    assert result["delta"] > 0.5
    assert result["p_value"] < 0.01
    assert result["significant"] is True
    assert position_bias(rows, seed=1) == result  # seeded


def test_no_bias_rejects_at_about_the_nominal_rate() -> None:
    rejections = 0
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        verdicts = np.where(rng.random(60) < 0.5, 1, -1).tolist()
        result = preference_bias(verdicts, seed=seed, permutations=2_000)
        rejections += result["p_value"] < 0.05
    assert 0.01 <= rejections / 200 <= 0.10


def test_both_orders_of_one_item_are_one_cluster() -> None:
    # The judge always picks the reply on top; each dialogue is judged in both orders.
    rows = []
    for i in range(6):
        rows += [vote(f"d{i}", "a", "b", "a"), vote(f"d{i}", "b", "a", "b")]
    result = position_bias(rows)
    assert result["p1"]["rate"] == 1.0 and result["n"] == 12
    assert result["test"]["clusters"] == 6
    assert result["p_value"] == pytest.approx(2 / 2**6)  # only all-top or all-bottom match
    independent = position_bias(rows, cluster_of=None)
    assert independent["p_value"] == pytest.approx(2 / 2**12)


def test_length_bias_counts_long_short_and_leaves_out_equal_or_unknown() -> None:
    rows = [
        vote("1", "a", "b", "a", (30, 10)),  # long won
        vote("2", "a", "b", "b", (10, 30)),  # long won
        vote("3", "b", "a", "b", (25, 5)),  # long won
        vote("4", "a", "b", "a", (5, 50)),  # short won
        vote("5", "a", "b", None, (5, 50)),  # tie
        vote("6", "a", "b", "a", (20, 20)),  # no long side
        vote("7", "a", "b", "a"),  # unknown lengths
    ]
    assert [length_verdict(r) for r in rows] == [1, 1, 1, -1, 0, None, None]
    result = length_bias(rows, cluster_of=None)
    assert result["categories"] == ["long", "short"]
    assert (result["n"], result["n_ties"], result["n_without_side"]) == (4, 1, 2)
    assert result["p1"]["rate"] == pytest.approx(0.75)
    assert result["delta"] == pytest.approx(0.5)
    assert result["p_value"] == pytest.approx(stats.binomtest(3, 4).pvalue)


def test_summary_per_rater_and_pooled() -> None:
    rows = [vote(f"i{i}", "a", "b", "a", (2, 1), rater="h") for i in range(5)]
    rows += [vote(f"i{i}", "a", "b", "b", (2, 1), rater="llm") for i in range(5)]
    summary = bias_summary(rows)
    assert set(summary["raters"]) == {"h", "llm"}
    assert summary["raters"]["h"]["position"]["delta"] == pytest.approx(1.0)
    assert summary["raters"]["llm"]["length"]["delta"] == pytest.approx(-1.0)
    assert summary["pooled"]["position"]["delta"] == pytest.approx(0.0)
    assert summary["clustered_by"] == "item"


def test_empty_and_invalid_inputs() -> None:
    result = position_bias([])
    assert result["n"] == 0 and result["delta"] is None and result["p_value"] is None
    with pytest.raises(ValueError, match="ties"):
        preference_bias([1, -1], ties="half")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="verdict"):
        preference_bias([2, -1])


def test_summary_is_json_ready() -> None:
    import json

    rows = top_bottom(3, 1, ties=1)
    json.dumps(bias_summary(rows), allow_nan=False)
    json.dumps(bias_summary([]), allow_nan=False)


@pytest.mark.parametrize(("leaning", "decidable"), [(1, False), (3, False), (5, False), (6, True)])
def test_too_few_units_is_said_not_reported_as_p(leaning: int, decidable: bool) -> None:
    # every unit prefers the top reply: the strongest evidence k units can give
    result = position_bias(top_bottom(leaning, 0), cluster_of=None)
    assert result["test"]["smallest_p"] == pytest.approx(2 / 2**leaning)
    assert result["test"]["clusters_needed"] == 6
    assert result["decidable"] is decidable
    if decidable:
        assert result["p_value"] == pytest.approx(2 / 64)
        assert result["significant"] is True
        assert "note" not in result
    else:
        assert result["p_value"] == pytest.approx(min(1.0, 2 / 2**leaning))
        assert result["significant"] is None  # not "no bias": the test cannot tell
        assert f"{leaning} of {leaning} independent units lean" in result["note"]
        assert "at least 6" in result["note"]


def test_units_whose_orders_cancel_do_not_count_towards_deciding() -> None:
    # 8 dialogues judged in both orders; in 5 the top reply won both times (+2), in 3 the
    # judge kept its verdict across orders (+1 - 1 = 0): only 5 lean, so no decision
    rows = []
    for i in range(8):
        leans = i < 5
        rows.append(vote(f"d{i}", "a", "b", "a"))
        rows.append(vote(f"d{i}", "b", "a", "b" if leans else "a"))
    result = position_bias(rows)
    assert result["test"]["clusters"] == 8
    assert result["test"]["clusters_leaning"] == 5
    assert result["decidable"] is False
    assert result["significant"] is None
    assert result["p_value"] == pytest.approx(2 / 32)
