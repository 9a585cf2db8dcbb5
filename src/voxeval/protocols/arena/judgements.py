"""A run's stored arena verdicts (and rubric scores) as the plain records the bias and
agreement analyses read, and the two analyses over a run folder (``voxeval analyze``).

Each done arena comparison gives two ``PairwiseJudgement``s, one per presentation order, so
position bias sees both orders; the reply lengths are the words of each side's replies. The
item of a judgement is the dialogue (``dialogue#tN`` for trials after the first), the same
key the unit's rubric score (metric ``rubric``, its value the case score) is filed under. The
per-criterion values of those scores (``details.criteria``) feed the bootstrap rubric
exclusion."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.analysis.agreement.judge_agreement import agreement_summary
from voxeval.analysis.agreement.preference_bias import bias_summary
from voxeval.analysis.agreement.rubric_exclusion import (
    DEFAULT_EXCLUSION_RESAMPLES,
    DEFAULT_FRACTIONS,
    rubric_exclusion_curve,
)
from voxeval.analysis.ratings.battles import battle_from_judgement
from voxeval.analysis.ratings.bradley_terry import DisconnectedComparisons, bradley_terry_strengths
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.rubric_values import CaseKey, RubricValue, case_scores
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.protocols.arena.multi_turn_arena import ARENA
from voxeval.store import RunStore

RUBRIC_METRIC = "rubric"
DEFAULT_RATER = "llm_judge"


def item_of(dialogue: str, trial: int) -> str:
    return dialogue if not trial else f"{dialogue}#t{trial}"


def rater_of(identity: JSONReadValue) -> str:
    """``llm:<model>`` from a judge identity (``Judge.identity()``), else ``llm_judge``."""
    if isinstance(identity, Mapping):
        llm = identity.get("llm")
        if isinstance(llm, Mapping) and llm.get("model"):
            return f"llm:{llm['model']}"
    return DEFAULT_RATER


def _length(features: JSONReadObject, system: str) -> float | None:
    of_system = features.get(system) or {}
    value = of_system.get("length") if isinstance(of_system, Mapping) else None
    if value is None:
        return None
    if not isinstance(value, str | int | float):
        raise TypeError(f"arena features of {system!r}: length {value!r} is not a number")
    return float(value)


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
            if order.get("winner") is None:
                continue  # a verdict the reference protocol skipped (neither A nor B)
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
    for row in store.scores.load():
        if row.metric != RUBRIC_METRIC or not row.ran or row.value is None:
            continue
        judge = row.details.get("judge")
        rater = rater_of(judge) if judge else default_rater
        scores[(rater, item_of(row.item_id, row.trial), row.system)] = float(row.value)
    return scores


def rubric_values(store: RunStore, default_rater: str) -> list[RubricValue]:
    """Every criterion value of the units' ``rubric`` scores that ran (``details.criteria``)."""
    values = []
    for row in store.scores.load():
        if row.metric != RUBRIC_METRIC or not row.ran or row.value is None:
            continue
        judge = row.details.get("judge")
        rater = rater_of(judge) if judge else default_rater
        item = item_of(row.item_id, row.trial)
        for criterion, value in sorted((row.details.get("criteria") or {}).items()):
            values.append(
                RubricValue(
                    rater=rater, item=item, system=row.system, criterion=criterion, value=value
                )
            )
    return values


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
) -> JSONObject:
    by_rater: dict[str, list[PairwiseJudgement]] = defaultdict(list)
    for judgement in judgements:
        by_rater[judgement.rater].append(judgement)
    rankings: dict[str, dict[str, float]] = {}
    for rater, group in sorted(by_rater.items()):
        strengths = _strengths(group)
        if strengths is not None:
            rankings[f"{rater} bradley_terry"] = strengths
    items = {j.item for j in judgements}
    machine = sorted(set(by_rater) - human_raters)
    per_system: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (rater, item, system), value in rubric.items():
        if item in items:
            per_system[rater][system].append(value)
    for rater, systems in sorted(per_system.items()):
        # the run's own judge keeps the plain name; imported rubric raters are named
        name = "rubric" if rater in machine or len(per_system) == 1 else f"{rater} rubric"
        rankings[name] = {s: sum(v) / len(v) for s, v in sorted(systems.items())}
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


def _exclusion(
    values: Sequence[RubricValue],
    judgements: Sequence[PairwiseJudgement],
    machine: Sequence[str],
    *,
    resamples: int,
    seed: int,
) -> JSONObject:
    """Per rubric rater: the exclusion curve against the full rubric ranking and against the
    same rater's arena Bradley-Terry (else the run judge's); ``not_run`` with the reason when
    the values cannot support it."""
    by_rater: dict[str, list[RubricValue]] = defaultdict(list)
    for value in values:
        by_rater[value.rater].append(value)
    out: dict[str, Any] = {}
    for rater, rows in sorted(by_rater.items()):
        arena_rater = rater if any(j.rater == rater for j in judgements) else None
        if arena_rater is None and machine:
            arena_rater = machine[0]
        arena = (
            _strengths([j for j in judgements if j.rater == arena_rater]) if arena_rater else None
        )
        systems = {v.system for v in rows}
        if len(systems) < 2:
            out[rater] = {"not_run": f"rubric values of {len(systems)} system(s); 2 needed"}
            continue
        try:
            curve = rubric_exclusion_curve(
                rows, fractions=DEFAULT_FRACTIONS, arena_ranking=arena,
                resamples=resamples, seed=seed,
            )  # fmt: skip
        except ValueError as exc:
            out[rater] = {"not_run": str(exc)}
            continue
        out[rater] = {
            "arena_rating": f"{arena_rater} bradley_terry" if arena is not None else None,
            "n_values": len(rows),
            "curve": curve,
        }
    return out


def analyze_agreement(
    store: RunStore,
    votes: Sequence[PairwiseJudgement] = (),
    rubric_votes: Sequence[RubricValue] = (),
    *,
    seed: int = 0,
    exclusion_resamples: int = DEFAULT_EXCLUSION_RESAMPLES,
) -> dict[str, Any]:
    """Arena vs rubric kappa, Spearman between rankings (each rater's Bradley-Terry and rubric
    means), rating vs win rate and, with human votes, pseudo agreement, pooled and per
    dimension; and the bootstrap rubric exclusion of each rater's per-criterion rubric values
    (the run's, ``rubric_votes``), pooled over dimensions."""
    judgements = [*arena_judgements(store), *votes]
    machine = sorted({j.rater for j in judgements} - {v.rater for v in votes})
    run_rater = machine[0] if len(machine) == 1 else DEFAULT_RATER
    values = [*rubric_values(store, run_rater), *rubric_votes]
    rubric = {**rubric_scores(store, run_rater), **case_scores(rubric_votes)}
    humans = {v.rater for v in votes} | {v.rater for v in rubric_votes}
    return {
        "all": _agreement(judgements, rubric, humans),
        "dimensions": {
            dimension: _agreement(group, rubric, humans)
            for dimension, group in _by_dimension(judgements).items()
        },
        "rubric_exclusion": (
            _exclusion(values, judgements, machine, resamples=exclusion_resamples, seed=seed)
            if values
            else {"not_run": "no per-criterion rubric values in the run or --rubric-votes"}
        ),
    }
