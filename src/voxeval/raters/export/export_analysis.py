"""The analyses ``voxeval raters export`` runs on the exported human answers, with the same
code the LLM judges' results go through:

- arena: Bradley-Terry ratings with cluster-bootstrap intervals (dialogues resampled), rank
  intervals, online Elo, style control and the win matrix
  (``analysis.ratings.arena_summary``), pooled
  and per dimension; with the source run's arena verdicts: Cohen's kappa of each human vote
  against each LLM verdict on the same dialogue and pair, Spearman between the human and LLM
  rankings, and the pseudo agreement table (``analysis.agreement.judge_agreement``).
- rubric: per system the mean case score (share of criteria met, clustered by item) and the
  pass rate of each criterion; with the run's per-criterion LLM verdicts (multi-turn): Cohen's
  kappa of human against LLM values on the same item, system and criterion.
- score: per system the mean human score; Pearson and Spearman against the run's checklist
  scores with cluster-bootstrap intervals over queries (``report.human_scores``, the code of
  ``voxeval human-scores``).
An analysis that cannot run says why (``not_run``) instead of returning a number."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from voxeval.analysis.agreement.classification_agreement import label_kappa
from voxeval.analysis.agreement.judge_agreement import pseudo_agreement_table, ranking_spearman
from voxeval.analysis.agreement.preference_bias import bias_summary
from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import Battle, battle_from_judgement
from voxeval.analysis.ratings.bradley_terry import DisconnectedComparisons, bradley_terry_strengths
from voxeval.analysis.ratings.human_votes import load_rubric_values, load_votes
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.analysis.rubric_values import case_scores
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.protocols.arena.judgements import DEFAULT_RATER, arena_judgements, rubric_values
from voxeval.report.human_scores import human_validation, read_human_scores
from voxeval.store import RunStore

ALL = "all"


def _battles(judgements: Sequence[PairwiseJudgement]) -> list[Battle]:
    return [battle_from_judgement(j, order=n) for n, j in enumerate(judgements)]


def _verdict(judgement: PairwiseJudgement) -> str:
    return judgement.winner or "tie"


def human_llm_arena(
    human: Sequence[PairwiseJudgement],
    llm: Sequence[PairwiseJudgement],
    human_ratings: Mapping[str, float] | None,
) -> JSONObject:
    """Kappa of every human vote against every LLM verdict (both judged orders) of the same
    dialogue and pair; verdicts are the winner's name or ``tie``, so sides do not matter."""
    by_key: dict[tuple[str, tuple[str, str]], list[str]] = defaultdict(list)
    for judgement in llm:
        by_key[(judgement.item, judgement.pair)].append(_verdict(judgement))
    humans: list[str] = []
    machines: list[str] = []
    matched = 0
    for vote in human:
        found = by_key.get((vote.item, vote.pair), [])
        matched += bool(found)
        for verdict in found:
            humans.append(_verdict(vote))
            machines.append(verdict)
    out: dict[str, Any] = {
        "llm_raters": sorted({j.rater for j in llm}),
        "votes_matched": matched,
        "votes_unmatched": len(human) - matched,
        "pairs": len(humans),
    }
    if not humans:
        out["kappa"] = None
        out["not_run"] = "no human vote shares a dialogue and pair with an LLM verdict"
        return out
    kappa, table = label_kappa(humans, machines)
    out.update(
        kappa=kappa,
        agreement=sum(h == m for h, m in zip(humans, machines, strict=True)) / len(humans),
        **table,
    )
    try:
        strengths = bradley_terry_strengths(_battles(llm))
    except DisconnectedComparisons as exc:
        out["ranking_spearman"] = {"not_run": str(exc)}
    else:
        if human_ratings:
            out["ranking_spearman"] = ranking_spearman(human_ratings, strengths)
    out["pseudo_agreement"] = pseudo_agreement_table(human, llm)
    return out


def arena_analysis(
    votes_path: Path,
    run: RunStore | None,
    *,
    seed: int,
    resamples: int = DEFAULT_RATING_RESAMPLES,
) -> JSONObject:
    votes = load_votes(votes_path)  # read back: the file is what a user would analyse
    battles = _battles(votes)
    pooled = [replace(b, dimension=ALL) for b in battles]
    groups: dict[str, list[Battle]] = defaultdict(list)
    for battle in battles:
        groups[battle.dimension or ""].append(battle)
    out: dict[str, Any] = {
        "n_votes": len(votes),
        "raters": len({v.rater for v in votes}),
        "both_bad_counted_as_tie": True,
        ALL: arena_summary(pooled, seed=seed, n_resamples=resamples),
        "dimensions": {
            dimension: arena_summary(group, seed=seed, n_resamples=resamples)
            for dimension, group in sorted(groups.items())
            if len(groups) > 1
        },
    }
    # do the listeners favour the reply heard first, or the longer one? (per rater, pooled)
    out["bias"] = bias_summary(votes, seed=seed)
    bt = out[ALL].get("bt")
    # battles that do not link every system give no comparable ratings (all unbounded)
    linked = bt is not None and not bt.get("groups")
    human_ratings = {s: v["rating"] for s, v in bt["systems"].items()} if linked else None
    if run is None:
        out["human_vs_llm"] = {"not_run": "the source run folder is not available"}
    else:
        llm = arena_judgements(run)
        out["human_vs_llm"] = (
            human_llm_arena(votes, llm, human_ratings)
            if llm
            else {"not_run": "the run had no judge: it holds no arena verdicts of an LLM judge"}
        )
    return out


def rubric_analysis(
    rubric_path: Path, run: RunStore | None, protocol: str, *, seed: int
) -> JSONObject:
    values = load_rubric_values(rubric_path)
    cases = case_scores(values)
    per_system: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (_, item, system), score in sorted(cases.items()):
        per_system[system].append((item, score))
    criteria: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for value in values:
        criteria[value.system][value.criterion].append(float(value.value))
    out: dict[str, Any] = {
        "n_values": len(values),
        "raters": len({v.rater for v in values}),
        "systems": {
            system: {
                "case_score": metric_stats(
                    [s for _, s in rows], clusters=[i for i, _ in rows], seed=seed
                ),
                "criteria": {
                    cid: {"pass_rate": sum(v) / len(v), "n": len(v)}
                    for cid, v in sorted(criteria[system].items())
                },
            }
            for system, rows in sorted(per_system.items())
        },
    }
    if run is None:
        out["human_vs_llm"] = {"not_run": "the source run folder is not available"}
    elif protocol != "multi_turn":
        out["human_vs_llm"] = {
            "not_run": "the single-turn judge grades the checklist as one 1-10 score, not "
            "entry by entry; compare with a score study"
        }
    else:
        llm = {(v.item, v.system, v.criterion): v.value for v in rubric_values(run, DEFAULT_RATER)}
        pairs = [
            (int(v.value), int(llm[key]))
            for v in values
            if (key := (v.item, v.system, v.criterion)) in llm
        ]
        if not pairs:
            out["human_vs_llm"] = {
                "not_run": "the run had no judge: it holds no per-criterion rubric verdicts"
            }
        else:
            kappa, table = label_kappa([h for h, _ in pairs], [m for _, m in pairs])
            out["human_vs_llm"] = {
                "kappa": kappa,
                "agreement": sum(h == m for h, m in pairs) / len(pairs),
                "n": len(pairs),
                **table,
            }
    return out


def score_analysis(
    scores_path: Path,
    run: RunStore | None,
    query_ids: Mapping[str, str],
    *,
    seed: int,
) -> JSONObject:
    ratings = read_human_scores(scores_path)
    per_system: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for rating in ratings:
        per_system[rating.system or ""].append((rating.item_id, rating.score))
    out: dict[str, Any] = {
        "n_scores": len(ratings),
        "systems": {
            system: metric_stats(
                [s for _, s in rows],
                clusters=[query_ids.get(i, i) for i, _ in rows],
                seed=seed,
            )
            for system, rows in sorted(per_system.items())
        },
    }
    if run is None:
        out["human_vs_llm"] = {"not_run": "the source run folder is not available"}
        return out
    rows = run.scores.load()
    checklist = [r for r in rows if r.metric == "checklist"]
    if not checklist:
        out["human_vs_llm"] = {"not_run": "the run had no judge: it holds no checklist scores"}
        return out
    if not any(r.ran for r in checklist):
        out["human_vs_llm"] = {
            "not_run": f"the run's judge scored no reply ({len(checklist)} checklist "
            "score(s) failed or pending)"
        }
        return out
    try:
        out["human_vs_llm"] = human_validation(scores_path, ratings, rows, query_ids, seed=seed)
    except ConfigError as exc:
        out["human_vs_llm"] = {"not_run": str(exc)}
    return out


def gold_summary(gold: Sequence[tuple[str, str, bool]]) -> JSONObject:
    """``gold``: (rater, item, correct) of every gold answer, flagged raters included."""
    by_item: dict[str, list[bool]] = defaultdict(list)
    for _, item, correct in gold:
        by_item[item].append(correct)
    right = sum(c for _, _, c in gold)
    return {
        "answers": len(gold),
        "correct": right,
        "accuracy": right / len(gold) if gold else None,
        "items": {
            item: {"answers": len(v), "correct": sum(v)} for item, v in sorted(by_item.items())
        },
    }
