"""Position and length preference of a judge (MTalk-Bench bias analysis).

For every judged comparison one of two categories is preferred: the reply shown first (top)
or second (bottom); the longer or the shorter reply. The preference rate of a category is
``n_preferred / N``; the bias is ``Delta = p1 - p2`` (top minus bottom, long minus short), so a
positive Delta leans towards the first category. Each rate has a Wilson interval (on the
effective n when comparisons are clustered, see ``proportion.rate_stats``).

Significance: under "no bias", which of the two replies carried the category label (which was on
top, which was longer) is unrelated to the verdict, so swapping the labels within a comparison
is as likely as not. The test swaps them at random - jointly for all comparisons of one cluster
(an item judged in both orders, by several pairs of systems) - and counts how often the
swapped |Delta| reaches the observed one: the paired sign-flip test of ``sign_flip`` on each
cluster's (category-1 wins - category-2 wins), two-sided, seeded, exact when the clusters are
few. (The paper describes pooling the labels and re-splitting them into two groups; swapping
within each comparison is the relabelling that the design makes exchangeable.)

Too few units to decide: a cluster whose category-1 and category-2 wins cancel out (or a tie)
never moves the statistic, so only the k clusters that lean one way count, and the smallest
p-value any data can give is 2 / 2^k. Below k = 6 that is above 0.05: the test cannot reject
at the 5% level whatever the verdicts. The result then says so (``decidable: false``,
``significant: null`` and a ``note`` with the count needed) instead of reporting only p.

Ties: by default (``ties="exclude"``) a tie prefers neither category and is left out of N, so
p1 + p2 = 1, as in the paper's tables; with ``ties="count"`` ties stay in N (p1 + p2 + tie
rate = 1) and weigh Delta towards 0. Either way their number is reported. A comparison whose
replies have the same (or an unknown) length has no long/short side and is left out of the
length analysis, also counted.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Literal, NotRequired, TypedDict, Unpack

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, Stat
from voxeval.analysis.proportion import rate_stats
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.sign_flip import SignFlipResult, sign_flip_test

DEFAULT_PERMUTATIONS = 10_000
SIGNIFICANCE_LEVEL = 0.05
TiePolicy = Literal["exclude", "count"]
# One comparison's verdict as seen by a bias: +1 category 1 preferred, -1 category 2, 0 tie.
Verdict = int


class BiasOptions(TypedDict, total=False):
    """The settings ``position_bias``, ``length_bias`` and ``bias_summary`` pass on to
    ``preference_bias``."""

    ties: TiePolicy
    seed: int
    permutations: int
    confidence: float
    alpha: float


class RateEntry(TypedDict):
    rate: float
    ci_low: float | None
    ci_high: float | None
    n_eff: float | None


class BiasTest(SignFlipResult):
    clusters: int
    clusters_leaning: int
    smallest_p: float
    clusters_needed: int
    alpha: float


class PreferenceBias(TypedDict):
    """``preference_bias``: the rates, Delta and test (None without a kept comparison);
    ``note`` when too few units lean to decide. ``categories`` and ``n_without_side`` are
    added by the position and length analyses."""

    n: int
    n_ties: int
    ties: TiePolicy
    p1: RateEntry | None
    p2: RateEntry | None
    delta: float | None
    p_value: float | None
    significant: bool | None
    decidable: bool | None
    test: BiasTest | None
    note: NotRequired[str]
    categories: NotRequired[list[str]]
    n_without_side: NotRequired[int]


class RaterBias(TypedDict):
    position: PreferenceBias
    length: PreferenceBias


class BiasSummary(TypedDict):
    raters: dict[str, RaterBias]
    pooled: RaterBias
    clustered_by: str | None


def preference_bias(
    verdicts: Sequence[Verdict],
    *,
    clusters: Sequence[Hashable] | None = None,
    ties: TiePolicy = "exclude",
    seed: int = 0,
    permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = SIGNIFICANCE_LEVEL,
) -> PreferenceBias:
    """Rates, Delta and permutation p-value of ``verdicts`` (+1 / -1 / 0 per comparison).
    ``clusters`` gives each comparison's independent unit (None: each its own)."""
    if ties not in ("exclude", "count"):
        raise ValueError(f"ties must be 'exclude' or 'count', not {ties!r}")
    keys = list(clusters) if clusters is not None else list(range(len(verdicts)))
    if len(keys) != len(verdicts):
        raise ValueError(f"{len(verdicts)} verdicts but {len(keys)} cluster keys")
    if any(v not in (-1, 0, 1) for v in verdicts):
        raise ValueError("a verdict is +1 (category 1 preferred), -1 (category 2) or 0 (tie)")
    n_ties = sum(1 for v in verdicts if v == 0)
    kept = [(v, k) for v, k in zip(verdicts, keys, strict=True) if v != 0 or ties == "count"]
    out: PreferenceBias = {
        "n": len(kept),
        "n_ties": n_ties,
        "ties": ties,
        "p1": None,
        "p2": None,
        "delta": None,
        "p_value": None,
        "significant": None,
        "decidable": None,
        "test": None,
    }
    if not kept:
        return out
    kept_keys = [k for _, k in kept]
    p1 = rate_stats([v == 1 for v, _ in kept], clusters=kept_keys, confidence=confidence)
    p2 = rate_stats([v == -1 for v, _ in kept], clusters=kept_keys, confidence=confidence)
    per_cluster: dict[Hashable, int] = defaultdict(int)
    for v, k in kept:
        per_cluster[k] += v
    test = sign_flip_test(list(per_cluster.values()), seed=seed, resamples=permutations)
    leaning = sum(1 for total in per_cluster.values() if total != 0)
    smallest = smallest_attainable_p(leaning, test["assignments"])
    decidable = smallest < alpha
    out["p1"] = _rate(p1)
    out["p2"] = _rate(p2)
    out["delta"] = p1["mean"] - p2["mean"]
    out["p_value"] = test["p_value"]
    out["significant"] = test["p_value"] < alpha if decidable else None
    out["decidable"] = decidable
    out["test"] = {
        **test,
        "clusters": len(per_cluster),
        "clusters_leaning": leaning,
        "smallest_p": smallest,
        "clusters_needed": clusters_needed(alpha),
        "alpha": alpha,
    }
    if not decidable:
        out["note"] = (
            f"too few to decide: {leaning} of {len(per_cluster)} independent units lean "
            f"either way, so the smallest p-value the sign-flip test can give is "
            f"{smallest:.3g}, not below alpha = {alpha:g}; at least {clusters_needed(alpha)} "
            "units that lean are needed"
        )
    return out


def smallest_attainable_p(leaning: int, assignments: int) -> float:
    """The smallest p-value the sign-flip test can return when ``leaning`` units have a
    non-zero difference: only the two all-same-sign assignments reach the maximum, 2 / 2^k
    (and a Monte Carlo p is never below 1 / assignments)."""
    return min(1.0, max(2.0 / 2.0**leaning, 1.0 / assignments))


def clusters_needed(alpha: float) -> int:
    """The fewest leaning units for which 2 / 2^k < alpha (6 at alpha = 0.05)."""
    return math.floor(math.log2(2.0 / alpha)) + 1


def _rate(stat: Stat) -> RateEntry:
    return {
        "rate": stat["mean"],
        "ci_low": stat["ci_low"],
        "ci_high": stat["ci_high"],
        "n_eff": stat.get("n_eff"),
    }


def position_verdict(judgement: PairwiseJudgement) -> Verdict:
    """+1 when the reply shown first won, -1 when the second won, 0 for a tie."""
    if judgement.is_tie:
        return 0
    return 1 if judgement.first_won else -1


def length_verdict(judgement: PairwiseJudgement) -> Verdict | None:
    """+1 when the longer reply won, -1 when the shorter won, 0 for a tie; None when the
    lengths are unknown or equal (no long/short side)."""
    a, b = judgement.first_length, judgement.second_length
    if a is None or b is None or a == b:
        return None
    if judgement.is_tie:
        return 0
    first_longer = a > b
    return 1 if judgement.first_won == first_longer else -1


def _by_item(judgement: PairwiseJudgement) -> Hashable:
    return judgement.item


def _bias_of(
    judgements: Iterable[PairwiseJudgement],
    verdict_of: Callable[[PairwiseJudgement], Verdict | None],
    cluster_of: Callable[[PairwiseJudgement], Hashable] | None,
    **options: Unpack[BiasOptions],
) -> PreferenceBias:
    verdicts: list[Verdict] = []
    keys: list[Hashable] = []
    without_side = 0
    for index, judgement in enumerate(judgements):
        verdict = verdict_of(judgement)
        if verdict is None:
            without_side += 1
            continue
        verdicts.append(verdict)
        keys.append(cluster_of(judgement) if cluster_of is not None else index)
    result = preference_bias(verdicts, clusters=keys, **options)
    result["n_without_side"] = without_side
    return result


def position_bias(
    judgements: Iterable[PairwiseJudgement],
    *,
    cluster_of: Callable[[PairwiseJudgement], Hashable] | None = _by_item,
    **options: Unpack[BiasOptions],
) -> PreferenceBias:
    """Top (first shown) vs bottom preference: p1 = TPR, p2 = BPR, Delta = TPR - BPR.
    Comparisons of one item are one cluster by default (``cluster_of=None``: independent)."""
    result = _bias_of(judgements, position_verdict, cluster_of, **options)
    result.pop("n_without_side")  # every comparison has a top and a bottom
    return {"categories": ["top", "bottom"], **result}


def length_bias(
    judgements: Iterable[PairwiseJudgement],
    *,
    cluster_of: Callable[[PairwiseJudgement], Hashable] | None = _by_item,
    **options: Unpack[BiasOptions],
) -> PreferenceBias:
    """Long vs short preference: p1 = LPR, p2 = SPR, Delta = LPR - SPR. Comparisons with
    equal or unknown lengths are left out (``n_without_side``)."""
    return {
        "categories": ["long", "short"],
        **_bias_of(judgements, length_verdict, cluster_of, **options),
    }


def bias_summary(
    judgements: Iterable[PairwiseJudgement],
    *,
    cluster_by_item: bool = True,
    **options: Unpack[BiasOptions],
) -> BiasSummary:
    """JSON-ready ``{"raters": {rater: {"position": ..., "length": ...}}, "pooled": ...}``:
    each rater analysed alone, and all judgements together (``pooled``)."""
    cluster_of = _by_item if cluster_by_item else None
    rows = list(judgements)
    by_rater: dict[str, list[PairwiseJudgement]] = defaultdict(list)
    for judgement in rows:
        by_rater[judgement.rater].append(judgement)

    def both(group: list[PairwiseJudgement]) -> RaterBias:
        return {
            "position": position_bias(group, cluster_of=cluster_of, **options),
            "length": length_bias(group, cluster_of=cluster_of, **options),
        }

    return {
        "raters": {rater: both(group) for rater, group in sorted(by_rater.items())},
        "pooled": both(rows),
        "clustered_by": "item" if cluster_by_item else None,
    }
