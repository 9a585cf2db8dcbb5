"""The multi-turn report: the standard per-system summary (the dialogue is the independent
unit: its trials are resampled together) plus, under ``rubric``, the model score x100 overall
and per dimension, with per-level and per-capability (tier-1) breakdowns and the turn-level
curve T1..Tn, and the judge's accounting.

A failed dialogue (the system's fault) scores 0 on every criterion: it counts as 0 at every
level and at every turn of the dialogue, so a failure never leaves a mean."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from voxeval.analysis.aggregate import standard_summary
from voxeval.analysis.bootstrap import metric_stats
from voxeval.benchmarks.dialogue import RUBRIC_LEVELS, Dialogue
from voxeval.protocols.context import RunContext
from voxeval.store.records import ScoreRow

SCALE = 100.0  # model scores are shown x100 (MTalk-Bench)
JUDGED = ("rubric", "rubric_turns")


class _Values:
    """Scaled values with the dialogue each came from, grouped by a key."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)
        self.clusters: dict[str, list[str]] = defaultdict(list)

    def add(self, key: str, value: float, dialogue: str) -> None:
        self.values[key].append(SCALE * value)
        self.clusters[key].append(dialogue)

    def stats(self, seed: int, order: Sequence[str] | None = None) -> dict[str, Any]:
        keys = [k for k in order if k in self.values] if order else sorted(self.values)
        return {k: metric_stats(self.values[k], clusters=self.clusters[k], seed=seed) for k in keys}


def _levels_of(row: ScoreRow, dialogue: Dialogue | None) -> dict[str, float]:
    by_level = row.details.get("by_level")
    if isinstance(by_level, dict):
        return {str(k): float(v) for k, v in by_level.items()}
    if dialogue is None:
        return {}
    # a failure score: 0 at each level the dialogue has criteria for
    return {lv: float(row.value or 0.0) for lv in RUBRIC_LEVELS if dialogue.rubrics.used(lv)}


def _turns_of(row: ScoreRow, dialogue: Dialogue | None) -> dict[str, float]:
    turns = row.details.get("turns")
    if isinstance(turns, dict) and turns:
        return {str(k): float(v["value"]) for k, v in turns.items()}
    if dialogue is None:
        return {}
    return {f"T{k}": float(row.value or 0.0) for k in range(1, len(dialogue.turns) + 1)}


def _rubric_block(
    rows: Sequence[ScoreRow], dialogues: Mapping[str, Dialogue], seed: int
) -> dict[str, Any]:
    overall, levels, turns = _Values(), _Values(), _Values()
    per_dim: dict[str, dict[str, _Values]] = defaultdict(
        lambda: {"score": _Values(), "levels": _Values(), "caps": _Values(), "turns": _Values()}
    )
    for row in rows:
        if not row.ran or row.value is None:
            continue
        dialogue = dialogues.get(row.item_id)
        dim = row.category
        groups = per_dim[dim]
        if row.metric == "rubric":
            overall.add("model_score", float(row.value), row.item_id)
            groups["score"].add("model_score", float(row.value), row.item_id)
            for level, value in _levels_of(row, dialogue).items():
                levels.add(level, value, row.item_id)
                groups["levels"].add(level, value, row.item_id)
            if dialogue is not None and dialogue.capability is not None:
                groups["caps"].add(dialogue.capability.tier1, float(row.value), row.item_id)
        elif row.metric == "rubric_turns":
            for prefix, value in _turns_of(row, dialogue).items():
                turns.add(prefix, value, row.item_id)
                groups["turns"].add(prefix, value, row.item_id)
    if not overall.values and not turns.values:
        return {}
    order = sorted(turns.values, key=lambda k: int(k[1:]))
    block: dict[str, Any] = {
        **overall.stats(seed),
        "by_level": levels.stats(seed, RUBRIC_LEVELS),
        "turns": turns.stats(seed, order),
        "by_dimension": {},
    }
    for dim in sorted(per_dim):
        g = per_dim[dim]
        dim_order = sorted(g["turns"].values, key=lambda k: int(k[1:]))
        block["by_dimension"][dim] = {
            **g["score"].stats(seed),
            "by_level": g["levels"].stats(seed, RUBRIC_LEVELS),
            "by_capability": g["caps"].stats(seed),
            "turns": g["turns"].stats(seed, dim_order),
        }
    return block


def judge_accounting(rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """Judge calls and parse failures (unknown, missing or malformed criterion answers) over
    the judged metrics."""
    calls = failures = 0
    for row in rows:
        if row.metric in JUDGED:
            calls += int(row.details.get("judge_calls") or 0)
            failures += int(row.details.get("parse_failures") or 0)
    return {
        "calls": calls,
        "parse_failures": failures,
        "parse_failure_rate": failures / calls if calls else None,
    }


def summarize_multi_turn(
    ctx: RunContext, metrics: Sequence[str], dialogues: Mapping[str, Dialogue]
) -> dict[str, Any]:
    store = ctx.store
    rows = store.load_scores()
    clusters = {row.item_id: row.item_id for row in rows}  # the dialogue is the unit
    summary = standard_summary(
        rows,
        metrics,
        seed=ctx.seed,
        units=store.status_counts(),
        clusters=clusters,
        cluster_unit="dialogue",
    )
    by_system: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        by_system[row.system].append(row)
    for system, entry in summary.items():
        sys_rows = by_system.get(system, [])
        block = _rubric_block(sys_rows, dialogues, ctx.seed)
        if block:
            entry["rubric"] = block
        entry["judge"] = judge_accounting(sys_rows)
    return summary
