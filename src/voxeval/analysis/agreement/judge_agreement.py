"""Agreement between evaluation formats and between raters (MTalk-Bench meta-analysis).

- Arena vs rubric, per rater: the rubric-implied winner of a comparison is the side whose
  case score (mean of its rubric criteria, by the same rater on the same item) is higher, a tie
  when equal; Cohen's kappa between it and the arena verdict, over the classes first / second /
  tie. ``rubric_ties="exclude"`` drops rubric ties instead, as the paper does.
- Spearman between two rankings (``{system: score}``; any rating - Bradley-Terry, Elo, rubric
  score - plugs in).
- Pseudo agreement of two raters on a pair of systems X, Y: with pH and pL the share of X's
  wins over Y for each rater, P = pH pL + (1 - pH)(1 - pL), the chance that the two raters
  would give the same verdict on an item drawn at random if each decided independently.
- Rating vs win rate: Spearman between a rating and each system's overall win rate.

Win rates count a tie as half a win for each side (as the Bradley-Terry fit does).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from scipy import stats

from voxeval.analysis.agreement.classification_agreement import label_kappa
from voxeval.analysis.ratings.pairwise_judgement import TIE, PairwiseJudgement
from voxeval.analysis.rubric_values import CaseKey

PSEUDO_AGREEMENT_THRESHOLD = 0.75  # the paper's "empirical threshold"
FIRST, SECOND = "first", "second"


def arena_verdict(judgement: PairwiseJudgement) -> str:
    if judgement.is_tie:
        return TIE
    return FIRST if judgement.first_won else SECOND


def rubric_verdict(first_score: float, second_score: float) -> str:
    """The rubric-implied winner: the side with the higher case score; equal -> tie."""
    if first_score == second_score:
        return TIE
    return FIRST if first_score > second_score else SECOND


def arena_rubric_kappa(
    judgements: Iterable[PairwiseJudgement],
    scores: Mapping[CaseKey, float],
    *,
    rubric_ties: Literal["category", "exclude"] = "category",
) -> dict[str, dict[str, Any]]:
    """Per rater: ``{"kappa", "agreement", "n", "n_without_rubric", "n_rubric_ties_dropped",
    "classes", "table"}``. ``scores`` maps (rater, item, system) to the case score; a
    comparison lacking either side's score from the same rater is counted, not used."""
    if rubric_ties not in ("category", "exclude"):
        raise ValueError(f"rubric_ties must be 'category' or 'exclude', not {rubric_ties!r}")
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    missing: dict[str, int] = defaultdict(int)
    dropped: dict[str, int] = defaultdict(int)
    for j in judgements:
        a = scores.get((j.rater, j.item, j.first))
        b = scores.get((j.rater, j.item, j.second))
        if a is None or b is None:
            missing[j.rater] += 1
            continue
        implied = rubric_verdict(a, b)
        if implied == TIE and rubric_ties == "exclude":
            dropped[j.rater] += 1
            continue
        pairs[j.rater].append((arena_verdict(j), implied))
    out: dict[str, dict[str, Any]] = {}
    for rater in sorted({*pairs, *missing, *dropped}):
        rows = pairs.get(rater, [])
        arena = [a for a, _ in rows]
        rubric = [r for _, r in rows]
        value, table = label_kappa(arena, rubric) if rows else (None, {"classes": [], "table": []})
        out[rater] = {
            "kappa": value,
            "agreement": sum(a == r for a, r in rows) / len(rows) if rows else None,
            "n": len(rows),
            "n_without_rubric": missing.get(rater, 0),
            "n_rubric_ties_dropped": dropped.get(rater, 0),
            "rubric_ties": rubric_ties,
            **table,  # rows: arena verdict, columns: rubric verdict
        }
    return out


class Spearman(TypedDict):
    rho: float | None
    p_value: float | None
    n: int
    systems: list[str]


class RatingSpearman(Spearman):
    win_rates: dict[str, float]


class PseudoAgreementPair(TypedDict):
    systems: list[str]
    p_human: float
    p_llm: float
    n_human: float
    n_llm: float
    pseudo_agreement: float
    human_win_rate_difference: float


class PseudoAgreementTable(TypedDict):
    pairs: list[PseudoAgreementPair]
    threshold: float
    share_at_or_above_threshold: float | None
    spearman_vs_win_rate_difference: float | None


def ranking_spearman(first: Mapping[str, float], second: Mapping[str, float]) -> Spearman:
    """Spearman's rho (scipy) between two rankings over the systems both contain; rho is None
    with fewer than 3 common systems or when either ranking is constant on them."""
    systems = sorted(set(first) & set(second))
    out: Spearman = {"rho": None, "p_value": None, "n": len(systems), "systems": systems}
    x = [float(first[s]) for s in systems]
    y = [float(second[s]) for s in systems]
    if len(systems) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return out
    result = stats.spearmanr(x, y)
    out["rho"] = float(result.statistic)
    out["p_value"] = float(result.pvalue)
    return out


def pseudo_agreement(p_human: float, p_llm: float) -> float:
    """P = pH pL + (1 - pH)(1 - pL) for win shares pH, pL in [0, 1]."""
    for name, p in (("p_human", p_human), ("p_llm", p_llm)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a share in [0, 1], not {p}")
    return p_human * p_llm + (1.0 - p_human) * (1.0 - p_llm)


def pair_win_rates(
    judgements: Iterable[PairwiseJudgement],
) -> dict[tuple[str, str], dict[str, float]]:
    """``{(x, y): {"win_rate", "n"}}`` for each pair in name order: the share of x's wins over
    y (ties half), over both presentation orders."""
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for j in judgements:
        pair = j.pair
        totals[pair][0] += j.score_of(pair[0])
        totals[pair][1] += 1.0
    return {pair: {"win_rate": w / n, "n": int(n)} for pair, (w, n) in sorted(totals.items())}


def win_rates(judgements: Iterable[PairwiseJudgement]) -> dict[str, float]:
    """Each system's overall win rate: (wins + ties / 2) / comparisons it took part in."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for j in judgements:
        for system in (j.first, j.second):
            totals[system][0] += j.score_of(system)
            totals[system][1] += 1.0
    return {system: w / n for system, (w, n) in sorted(totals.items())}


def pseudo_agreement_table(
    human: Sequence[PairwiseJudgement],
    llm: Sequence[PairwiseJudgement],
    *,
    threshold: float = PSEUDO_AGREEMENT_THRESHOLD,
) -> PseudoAgreementTable:
    """Pseudo agreement per pair of systems judged by both groups, the share of pairs at or
    above ``threshold``, and Spearman between P and the human absolute win-rate difference
    |pH - (1 - pH)| over the pairs."""
    by_human, by_llm = pair_win_rates(human), pair_win_rates(llm)
    rows: list[PseudoAgreementPair] = []
    agreement: dict[str, float] = {}
    gap: dict[str, float] = {}
    for pair in sorted(set(by_human) & set(by_llm)):
        p_h, p_l = by_human[pair]["win_rate"], by_llm[pair]["win_rate"]
        rows.append(
            {
                "systems": list(pair),
                "p_human": p_h,
                "p_llm": p_l,
                "n_human": by_human[pair]["n"],
                "n_llm": by_llm[pair]["n"],
                "pseudo_agreement": pseudo_agreement(p_h, p_l),
                "human_win_rate_difference": abs(2.0 * p_h - 1.0),
            }
        )
        agreement[" vs ".join(pair)] = pseudo_agreement(p_h, p_l)
        gap[" vs ".join(pair)] = abs(2.0 * p_h - 1.0)
    return {
        "pairs": rows,
        "threshold": threshold,
        "share_at_or_above_threshold": (
            sum(p >= threshold for p in agreement.values()) / len(rows) if rows else None
        ),
        "spearman_vs_win_rate_difference": ranking_spearman(agreement, gap)["rho"],
    }


def rating_win_rate_spearman(
    ratings: Mapping[str, float], judgements: Iterable[PairwiseJudgement]
) -> RatingSpearman:
    """Spearman between a rating (Elo, Bradley-Terry, ...) and the overall win rates."""
    rates = win_rates(judgements)
    return {**ranking_spearman(ratings, rates), "win_rates": rates}


def agreement_summary(
    judgements: Sequence[PairwiseJudgement],
    *,
    rubric_scores: Mapping[CaseKey, float] | None = None,
    rankings: Mapping[str, Mapping[str, float]] | None = None,
    rating: Mapping[str, float] | None = None,
    human_raters: Collection[str] = (),
) -> dict[str, Any]:
    """JSON-ready agreement tables; each part is None when its input is not given.

    - ``arena_vs_rubric``: kappa per rater (needs ``rubric_scores``);
    - ``rankings``: Spearman between every two named rankings (``{name: {system: score}}``,
      e.g. human Bradley-Terry, judge Bradley-Terry, rubric scores);
    - ``rating_vs_win_rate``: Spearman between ``rating`` and the overall win rates;
    - ``pseudo_agreement``: the human raters' votes pooled against each other rater's."""
    names = sorted(rankings or {})
    humans = [j for j in judgements if j.rater in human_raters]
    others = sorted({j.rater for j in judgements} - set(human_raters))
    return {
        "arena_vs_rubric": (
            arena_rubric_kappa(judgements, rubric_scores) if rubric_scores is not None else None
        ),
        "rankings": (
            {
                f"{a} vs {b}": ranking_spearman(rankings[a], rankings[b])
                for i, a in enumerate(names)
                for b in names[i + 1 :]
            }
            if rankings
            else None
        ),
        "rating_vs_win_rate": (
            rating_win_rate_spearman(rating, judgements) if rating is not None else None
        ),
        "pseudo_agreement": (
            {
                rater: pseudo_agreement_table(humans, [j for j in judgements if j.rater == rater])
                for rater in others
            }
            if humans
            else None
        ),
    }
