"""A run's stored arena verdicts (and rubric scores) as the plain records the bias and
agreement analyses read, and the two analyses over a run folder (``voxeval analyze``).

Each done arena comparison gives two ``PairwiseJudgement``s, one per presentation order, so
position bias sees both orders; the reply lengths are the words of each side's replies. The
item of a judgement is the dialogue (``dialogue#tN`` for trials after the first), the same
key the unit's rubric score (metric ``rubric``, its value the case score) is filed under."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.analysis.battles import battle_from_judgement
from voxeval.analysis.bradley_terry import DisconnectedComparisons, bradley_terry_strengths
from voxeval.analysis.judge_agreement import agreement_summary
from voxeval.analysis.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.preference_bias import bias_summary
from voxeval.analysis.rubric_values import CaseKey
from voxeval.protocols.multi_turn_arena import ARENA
from voxeval.store import RunStore

RUBRIC_METRIC = "rubric"
DEFAULT_RATER = "llm_judge"


def item_of(dialogue: str, trial: int) -> str:
    return dialogue if not trial else f"{dialogue}#t{trial}"


def rater_of(identity: Any) -> str:
    """``llm:<model>`` from a judge identity (``Judge.identity()``), else ``llm_judge``."""
    if isinstance(identity, Mapping):
        llm = identity.get("llm")
        if isinstance(llm, Mapping) and llm.get("model"):
            return f"llm:{llm['model']}"
    return DEFAULT_RATER


def _length(features: Mapping[str, Any], system: str) -> float | None:
    value = (features.get(system) or {}).get("length")
    return None if value is None else float(value)


def arena_judgements(store: RunStore) -> list[PairwiseJudgement]:
    """Both orders of every done arena comparison, in key order."""
    out = []
    for record in store.comparisons.records(ARENA):
        result = record.result
        if record.status != "done" or not result:
            continue
        features = result.get("features") or {}
        item = item_of(str(result["dialogue"]), int(result.get("trial") or 0))
        for order in result.get("orders") or []:
            first, second = str(order["shown_a"]), str(order["shown_b"])
            winner = None if order["winner"] == "tie" else str(order["winner"])
            out.append(
                PairwiseJudgement(
                    rater=rater_of(result.get("judge")),
                    item=item,
                    first=first,
                    second=second,
                    winner=winner,
                    first_length=_length(features, first),
                    second_length=_length(features, second),
                    dimension=str(result.get("dimension") or "") or None,
                )
            )
    return out


def rubric_scores(store: RunStore, default_rater: str) -> dict[CaseKey, float]:
    """``{(rater, item, system): case score}`` from the units' ``rubric`` scores that ran."""
    scores: dict[CaseKey, float] = {}
    for row in store.load_scores():
        if row.metric != RUBRIC_METRIC or not row.ran or row.value is None:
            continue
        judge = row.details.get("judge")
        rater = rater_of(judge) if judge else default_rater
        scores[(rater, item_of(row.item_id, row.trial), row.system)] = float(row.value)
    return scores


def _strengths(judgements: Sequence[PairwiseJudgement]) -> dict[str, float] | None:
    battles = [battle_from_judgement(j, order=n) for n, j in enumerate(judgements)]
    if len({s for b in battles for s in (b.system_a, b.system_b)}) < 2:
        return None
    try:
        return bradley_terry_strengths(battles)
    except DisconnectedComparisons:
        return None


def _agreement(
    judgements: Sequence[PairwiseJudgement],
    rubric: Mapping[CaseKey, float],
    human_raters: set[str],
) -> dict[str, Any]:
    by_rater: dict[str, list[PairwiseJudgement]] = defaultdict(list)
    for judgement in judgements:
        by_rater[judgement.rater].append(judgement)
    rankings: dict[str, dict[str, float]] = {}
    for rater, group in sorted(by_rater.items()):
        strengths = _strengths(group)
        if strengths is not None:
            rankings[f"{rater} bradley_terry"] = strengths
    items = {j.item for j in judgements}
    per_system: dict[str, list[float]] = defaultdict(list)
    for (_, item, system), value in rubric.items():
        if item in items:
            per_system[system].append(value)
    if per_system:
        rankings["rubric"] = {s: sum(v) / len(v) for s, v in sorted(per_system.items())}
    machine = sorted(set(by_rater) - human_raters)
    rating = rankings.get(f"{machine[0]} bradley_terry") if machine else None
    return {
        **agreement_summary(
            judgements,
            rubric_scores=rubric if rubric else None,
            rankings=rankings if len(rankings) >= 2 else None,
            rating=rating,
            human_raters=human_raters,
        ),
        "rating": f"{machine[0]} bradley_terry" if rating is not None else None,
        "n_judgements": len(judgements),
    }


def _by_dimension(judgements: Sequence[PairwiseJudgement]) -> dict[str, list[PairwiseJudgement]]:
    groups: dict[str, list[PairwiseJudgement]] = defaultdict(list)
    for judgement in judgements:
        groups[judgement.dimension or ""].append(judgement)
    return dict(sorted(groups.items()))


def analyze_bias(
    store: RunStore, votes: Sequence[PairwiseJudgement] = (), *, seed: int = 0
) -> dict[str, Any]:
    """Position and length preference of every rater (the run's judge, imported voters),
    pooled and per dimension."""
    judgements = [*arena_judgements(store), *votes]
    return {
        "n_judgements": len(judgements),
        "all": bias_summary(judgements, seed=seed),
        "dimensions": {
            dimension: bias_summary(group, seed=seed)
            for dimension, group in _by_dimension(judgements).items()
        },
    }


def analyze_agreement(store: RunStore, votes: Sequence[PairwiseJudgement] = ()) -> dict[str, Any]:
    """Arena vs rubric kappa, Spearman between rankings (each rater's Bradley-Terry, the
    rubric means), rating vs win rate and, with human votes, pseudo agreement; pooled and per
    dimension."""
    judgements = [*arena_judgements(store), *votes]
    machine = sorted({j.rater for j in judgements} - {v.rater for v in votes})
    rubric = rubric_scores(store, machine[0] if len(machine) == 1 else DEFAULT_RATER)
    humans = {v.rater for v in votes}
    return {
        "all": _agreement(judgements, rubric, humans),
        "dimensions": {
            dimension: _agreement(group, rubric, humans)
            for dimension, group in _by_dimension(judgements).items()
        },
    }
