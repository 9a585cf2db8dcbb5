"""The ``pairwise`` comparison step of single-turn runs: per item, condition and trial, each
pair of systems is compared on each scored metric that has a better direction (see
``voxeval.scoring.metric_direction``), giving A's win, tie or loss; the summary gives, per pair
and metric, A's win rate (ties half) with a cluster-bootstrap interval over queries.

A metric that one side could not score (not run) is not compared for that pair; a pending
score keeps the comparison pending until the score is in. A system's failure is scored with
each metric's worst value, so it loses to an answer (or ties another failure)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.pairwise import Outcome, compare_values, win_rate_stats
from voxeval.config import RunConfig
from voxeval.json_types import JSONArray, JSONObject
from voxeval.protocols.comparison import Comparison
from voxeval.protocols.contract import WorkUnit
from voxeval.protocols.single_turn_summary import query_id_from_item
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.scoring.metric_direction import metric_direction
from voxeval.store import RunStore
from voxeval.store.comparisons import ComparisonRecord
from voxeval.store.records import ScoreRow

PAIRWISE = "pairwise"


def default_steps(config: RunConfig) -> list[str]:
    """Pairwise is on by default whenever there is someone to compare with."""
    return [PAIRWISE] if len(config.systems) >= 2 else []


def step_problems(config: RunConfig, steps: Sequence[str]) -> list[str]:
    if PAIRWISE in steps and len(config.systems) < 2:
        return [f"{PAIRWISE} compares systems and needs two or more; the config has one"]
    return []


def pairwise_comparisons(config: RunConfig, units: Sequence[WorkUnit]) -> list[Comparison]:
    """Every pair of systems (A before B in the config's order) on every item x condition x
    trial they both have, in plan order. Key: ``item|condition|trial|A|B``."""
    order = {spec.name: i for i, spec in enumerate(config.systems)}
    cells: dict[tuple[str, str, int], dict[str, WorkUnit]] = defaultdict(dict)
    for unit in units:
        if unit.system in order:  # a system removed from the config is not compared
            cells[(unit.item_id, unit.condition, unit.trial)][unit.system] = unit
    out = []
    for (item_id, condition, trial), by_system in cells.items():
        systems = sorted(by_system, key=order.__getitem__)
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                key = f"{item_id}|{condition}|{trial}|{a}|{b}"
                out.append(Comparison(PAIRWISE, key, (by_system[a], by_system[b])))
    return out


def _metric_order(
    config_metrics: Sequence[str], stored: Sequence[Mapping[str, ScoreRow]]
) -> list[str]:
    present = {m for scores in stored for m in scores}
    extra = sorted(present - set(config_metrics))
    return [m for m in config_metrics if m in present] + extra


def _not_scored(system: str, row: ScoreRow | None) -> str:
    if row is None:
        return f"{system}: no score stored"
    return f"{system}: not run ({row.error or 'no value'})"


def compare_pair(
    comparison: Comparison, store: RunStore, metrics: Sequence[str]
) -> ComparisonResult:
    """A's outcome against B on each metric both scored (``metrics`` first, in order, then
    any other stored metric); pending while an input score is pending."""
    unit_a, unit_b = comparison.units
    scores_a, scores_b = store.scores.of_unit(unit_a.key), store.scores.of_unit(unit_b.key)
    outcomes: dict[str, dict[str, Any]] = {}
    not_compared: dict[str, str] = {}
    pending: list[str] = []
    for metric in _metric_order(metrics, [scores_a, scores_b]):
        better = metric_direction(metric)
        if better is None:
            continue  # descriptive (duration, speaking rate): no side is better
        row_a, row_b = scores_a.get(metric), scores_b.get(metric)
        waiting = [u.system for u, r in ((unit_a, row_a), (unit_b, row_b)) if r and r.pending]
        if waiting:
            pending += [f"{system} {metric}" for system in waiting]
            continue
        if row_a is None or not row_a.ran or row_b is None or not row_b.ran:
            reasons = [
                _not_scored(u.system, r)
                for u, r in ((unit_a, row_a), (unit_b, row_b))
                if r is None or not r.ran
            ]
            not_compared[metric] = "; ".join(reasons)
            continue
        value_a, value_b = float(row_a.value), float(row_b.value)  # type: ignore[arg-type]
        outcomes[metric] = {
            "a": value_a,
            "b": value_b,
            "better": better,
            "outcome": compare_values(value_a, value_b, better),
        }
    result = {
        "a": unit_a.system,
        "b": unit_b.system,
        "item_id": unit_a.item_id,
        "condition": unit_a.condition,
        "trial": unit_a.trial,
        "metrics": outcomes,
        "not_compared": not_compared,
    }
    if pending:
        result["pending_scores"] = pending
        return ComparisonResult.pending_retry("input scores pending: " + ", ".join(pending), result)
    return ComparisonResult.done(result)


def summarize_pairwise(
    records: Sequence[ComparisonRecord],
    *,
    seed: int,
    query_ids: Mapping[str, str] | None = None,
) -> JSONObject:
    """Per pair and metric: A's win rate (ties half) with a cluster-bootstrap CI resampling
    the query, its wins/ties/losses and n, and ``difference``: the mean of A - B over the
    common cells with the same kind of interval; plus, per pair, the metrics not compared on some
    cells (with the most common reason). Outcomes of pending comparisons that are in (other
    metrics than the pending ones) count; their pending scores do not."""
    known = query_ids or {}
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    outcomes: dict[tuple[str, str], dict[str, list[Outcome]]] = defaultdict(dict)
    differences: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(dict)
    clusters: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(dict)
    directions: dict[str, str] = {}
    skipped: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(dict)
    for record in records:
        result = record.result
        if record.status not in ("done", "pending") or not result:
            continue
        pair = (str(result["a"]), str(result["b"]))
        pairs.setdefault(pair, {"a": pair[0], "b": pair[1]})
        item, condition = str(result["item_id"]), str(result["condition"])
        query = known.get(item) or query_id_from_item(item, condition)
        for metric, entry in (result.get("metrics") or {}).items():
            outcomes[pair].setdefault(metric, []).append(entry["outcome"])
            differences[pair].setdefault(metric, []).append(float(entry["a"]) - float(entry["b"]))
            clusters[pair].setdefault(metric, []).append(query)
            directions[metric] = str(entry["better"])
        for metric, reason in (result.get("not_compared") or {}).items():
            skipped[pair].setdefault(metric, []).append(str(reason))
    out_pairs: JSONArray = []
    for pair, entry in pairs.items():
        metrics: JSONObject = {
            metric: {
                "better": directions[metric],
                **win_rate_stats(values, clusters=clusters[pair][metric], seed=seed),
                # A - B on the same item, condition and trial (paired, same scoring seeds)
                "difference": metric_stats(
                    differences[pair][metric], clusters=clusters[pair][metric], seed=seed
                ),
            }
            for metric, values in outcomes[pair].items()
        }
        not_compared: JSONObject = {
            metric: {"count": len(reasons), "reason": Counter(reasons).most_common(1)[0][0]}
            for metric, reasons in skipped[pair].items()
        }
        out_pairs.append({**entry, "metrics": metrics, "not_compared": not_compared})
    return {"unit": "query", "pairs": out_pairs}
