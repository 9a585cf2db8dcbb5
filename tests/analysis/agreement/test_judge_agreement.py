from __future__ import annotations

import pytest

from voxeval.analysis.agreement.judge_agreement import (
    arena_rubric_kappa,
    pair_win_rates,
    pseudo_agreement,
    pseudo_agreement_table,
    ranking_spearman,
    rating_win_rate_spearman,
    rubric_verdict,
    win_rates,
)
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.rubric_values import RubricValue, case_scores


def vote(rater: str, item: str, winner: str | None, first="x", second="y") -> PairwiseJudgement:
    return PairwiseJudgement(rater, item, first, second, winner)


def kappa_fixture() -> tuple[list[PairwiseJudgement], dict[tuple[str, str, str], float]]:
    """Agreement table (rows arena, columns rubric; first, second, tie):
    [[4, 1, 0], [1, 3, 0], [0, 0, 1]]."""
    plan = (
        [("x", (0.9, 0.5))] * 4  # arena first, rubric first
        + [("x", (0.2, 0.5))]  # arena first, rubric second
        + [("y", (0.8, 0.5))]  # arena second, rubric first
        + [("y", (0.1, 0.6))] * 3  # arena second, rubric second
        + [(None, (0.5, 0.5))]  # both tie
    )
    votes, scores = [], {}
    for i, (winner, (a, b)) in enumerate(plan):
        votes.append(vote("judge", f"i{i}", winner))
        scores[("judge", f"i{i}", "x")] = a
        scores[("judge", f"i{i}", "y")] = b
    return votes, scores


def test_arena_rubric_kappa_golden() -> None:
    votes, scores = kappa_fixture()
    result = arena_rubric_kappa(votes, scores)["judge"]
    assert result["classes"] == ["first", "second", "tie"]
    assert result["table"] == [[4, 1, 0], [1, 3, 0], [0, 0, 1]]
    # p_o = 8/10, p_e = (5*5 + 4*4 + 1*1)/100 = 0.42, kappa = 0.38/0.58
    assert result["agreement"] == pytest.approx(0.8)
    assert result["kappa"] == pytest.approx(19 / 29)
    assert result["n"] == 10


def test_rubric_ties_can_be_excluded_as_in_the_paper() -> None:
    votes, scores = kappa_fixture()
    result = arena_rubric_kappa(votes, scores, rubric_ties="exclude")["judge"]
    assert result["n"] == 9 and result["n_rubric_ties_dropped"] == 1
    # [[4, 1], [1, 3]]: p_o = 7/9, p_e = (5*5 + 4*4)/81 = 41/81, kappa = (63-41)/(81-41)
    assert result["kappa"] == pytest.approx(22 / 40)


def test_kappa_is_per_rater_and_counts_missing_rubric_scores() -> None:
    votes, scores = kappa_fixture()
    other = [vote("human", "i0", "x"), vote("human", "i1", "y")]
    scores[("human", "i0", "x")] = 1.0  # "y" has no rubric score from the human on i0
    result = arena_rubric_kappa(votes + other, scores)
    assert result["human"]["n"] == 0 and result["human"]["n_without_rubric"] == 2
    assert result["human"]["kappa"] is None
    assert result["judge"]["n_without_rubric"] == 0


def test_rubric_verdict_and_case_scores() -> None:
    assert rubric_verdict(0.5, 0.25) == "first"
    assert rubric_verdict(0.25, 0.5) == "second"
    assert rubric_verdict(0.5, 0.5) == "tie"
    values = [RubricValue("r", "i", "x", f"c{k}", v) for k, v in enumerate([1, 1, 0, 1])]
    assert case_scores(values) == {("r", "i", "x"): 0.75}
    with pytest.raises(ValueError, match="criterion 'c9'"):
        RubricValue("r", "i", "x", "c9", 0.5)


def test_ranking_spearman() -> None:
    result = ranking_spearman(
        {"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 10, "b": 30, "c": 20, "d": 40, "e": 0}
    )
    # ranks (1,2,3,4) vs (1,3,2,4): 1 - 6*2/(4*15) = 0.8
    assert result["rho"] == pytest.approx(0.8)
    assert result["systems"] == ["a", "b", "c", "d"]
    assert ranking_spearman({"a": 1, "b": 2}, {"a": 1, "b": 2})["rho"] is None
    assert ranking_spearman({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 2, "c": 3})["rho"] is None


def test_pseudo_agreement_golden() -> None:
    assert pseudo_agreement(0.8, 0.6) == pytest.approx(0.8 * 0.6 + 0.2 * 0.4)  # 0.56
    assert pseudo_agreement(1.0, 1.0) == 1.0
    assert pseudo_agreement(0.5, 0.9) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="p_llm"):
        pseudo_agreement(0.5, 1.5)


def test_pseudo_agreement_table_from_votes() -> None:
    human = [vote("h", f"i{i}", w) for i, w in enumerate(["x", "x", "x", "x", "y"])]
    human += [vote("h", "j", "z", first="z", second="x")]  # z beats x
    llm = [vote("l", f"i{i}", w) for i, w in enumerate(["x", "x", None, None, "y"])]
    llm += [vote("l", "j", "x", first="x", second="z")]  # x beats z
    table = pseudo_agreement_table(human, llm)
    pairs = {tuple(row["systems"]): row for row in table["pairs"]}
    assert pairs[("x", "y")]["p_human"] == pytest.approx(0.8)
    assert pairs[("x", "y")]["p_llm"] == pytest.approx(0.6)  # (2 wins + 2 half ties) / 5
    assert pairs[("x", "y")]["pseudo_agreement"] == pytest.approx(0.56)
    assert pairs[("x", "z")]["pseudo_agreement"] == pytest.approx(0.0)
    assert pairs[("x", "z")]["human_win_rate_difference"] == pytest.approx(1.0)
    assert table["share_at_or_above_threshold"] == 0.0
    assert table["spearman_vs_win_rate_difference"] is None  # two pairs only


def test_win_rates_and_rating_spearman() -> None:
    votes = [vote("j", "1", "x"), vote("j", "2", "x", first="y", second="x")]
    votes += [
        vote("j", "3", None, first="y", second="z"),
        vote("j", "4", "z", first="x", second="z"),
    ]
    # x: win, win, loss; y: loss, loss, tie; z: tie, win
    assert win_rates(votes) == {"x": pytest.approx(2 / 3), "y": pytest.approx(1 / 6), "z": 0.75}
    assert pair_win_rates(votes)[("x", "y")] == {"win_rate": 1.0, "n": 2}
    result = rating_win_rate_spearman({"x": 1010, "y": 990, "z": 1020}, votes)
    assert result["rho"] == pytest.approx(1.0)
    result = rating_win_rate_spearman({"x": 1030, "y": 990, "z": 1020}, votes)
    assert result["rho"] == pytest.approx(0.5)


def test_agreement_summary_is_json_ready() -> None:
    import json

    from voxeval.analysis.agreement.judge_agreement import agreement_summary

    votes, scores = kappa_fixture()
    human = [vote("ann", f"i{i}", "x" if i < 8 else "y") for i in range(10)]
    summary = agreement_summary(
        votes + human,
        rubric_scores=scores,
        rankings={"bt": {"x": 2, "y": 1, "z": 0}, "rubric": {"x": 80, "y": 70, "z": 75}},
        rating={"x": 1010, "y": 990},
        human_raters={"ann"},
    )
    json.dumps(summary, allow_nan=False)
    assert summary["arena_vs_rubric"]["judge"]["kappa"] == pytest.approx(19 / 29)
    assert summary["rankings"]["bt vs rubric"]["rho"] == pytest.approx(0.5)
    table = summary["pseudo_agreement"]["judge"]
    # human: x wins 8 of 10; judge: x 5 of 10 (4 + 1 wins, 1 tie as half, 4 losses) -> 0.55
    row = table["pairs"][0]
    assert (row["p_human"], row["p_llm"]) == (pytest.approx(0.8), pytest.approx(0.55))
    assert row["pseudo_agreement"] == pytest.approx(0.8 * 0.55 + 0.2 * 0.45)
    assert agreement_summary(votes)["pseudo_agreement"] is None
