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

from voxeval.analysis.aggregate import rows_by_system, standard_summary
from voxeval.analysis.bootstrap import metric_stats
from voxeval.api.context import RunContext
from voxeval.atomic_files import read_json
from voxeval.benchmarks.mtalk.dialogue import RUBRIC_LEVELS, Dialogue
from voxeval.benchmarks.mtalk.transcript_cues import JudgedFrom, cue_warnings
from voxeval.json_types import JSONObject
from voxeval.protocols.arena.inputs import DIALOGUE_FILE
from voxeval.protocols.single_turn_breakdowns import LATENCY_FIELDS
from voxeval.protocols.summary_distributions import (
    add_distributions,
    latency_histograms,
    turn_stats,
)
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

    def stats(self, seed: int, order: Sequence[str] | None = None) -> JSONObject:
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
) -> JSONObject:
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
    heard = sorted(
        {str(r.details["judged_from"]) for r in rows if r.ran and r.details.get("judged_from")}
    )
    block: dict[str, Any] = {
        # what the judge got: "transcript" or "audio" (both when scored in both ways)
        "judged_from": "+".join(heard) or "transcript",
        # voxeval's one call per dialogue, or the reference's general and sample calls
        "protocol": "reference"
        if any(r.details.get("protocol") == "reference" for r in rows)
        else "voxeval",
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


def judge_accounting(rows: Sequence[ScoreRow]) -> JSONObject:
    """Judge calls and parse failures (unknown, missing or malformed criterion answers) over
    the judged metrics, in all and per dimension."""
    calls = failures = 0
    by_dimension: dict[str, dict[str, int]] = defaultdict(lambda: {"calls": 0, "parse_failures": 0})
    for row in rows:
        if row.metric in JUDGED:
            row_calls = int(row.details.get("judge_calls") or 0)
            row_failures = int(row.details.get("parse_failures") or 0)
            calls += row_calls
            failures += row_failures
            by_dimension[row.category]["calls"] += row_calls
            by_dimension[row.category]["parse_failures"] += row_failures
    return {
        "calls": calls,
        "parse_failures": failures,
        "parse_failure_rate": failures / calls if calls else None,
        "by_dimension": {k: {**v} for k, v in sorted(by_dimension.items())},
    }


TurnPoints = dict[str, list[tuple[str, int, float]]]
"""latency field -> (dialogue, turn number, seconds) of every answered turn."""


def reply_latencies(ctx: RunContext) -> dict[str, TurnPoints]:
    """system -> the reply timings stored in the done dialogues' ``dialogue.json``."""
    out: dict[str, TurnPoints] = defaultdict(lambda: defaultdict(list))
    for unit in ctx.store.units.records("done"):
        stored = read_json(ctx.store.folder.unit_dir(unit) / DIALOGUE_FILE)
        turns = stored.get("turns") if isinstance(stored, dict) else None
        for turn in turns or ():
            timing = turn.get("timing") if isinstance(turn, dict) else None
            if not isinstance(timing, dict) or turn.get("reply_text") is None:
                continue  # a turn the system never answered has no latency
            for name in LATENCY_FIELDS:
                value = timing.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    out[unit.system][name].append((unit.item_id, int(turn["index"]), value))
    return out


def transcript_only_counts(ctx: RunContext) -> dict[str, dict[str, int]]:
    """system -> turns of its done dialogues, user turns without a recording and replies
    given as a transcript alone (released replies whose audio is absent)."""
    out: dict[str, dict[str, int]] = defaultdict(
        lambda: {"turns": 0, "user_turns": 0, "replies": 0}
    )
    for unit in ctx.store.units.records("done"):
        stored = read_json(ctx.store.folder.unit_dir(unit) / DIALOGUE_FILE)
        turns = stored.get("turns") if isinstance(stored, dict) else None
        counts = out[unit.system]
        for turn in turns or ():
            if not isinstance(turn, dict):
                continue
            counts["turns"] += 1
            counts["user_turns"] += turn.get("user_audio") is None
            counts["replies"] += bool(turn.get("reply_transcript_only"))
    return dict(out)


def summarize_multi_turn(
    ctx: RunContext,
    metrics: Sequence[str],
    dialogues: Mapping[str, Dialogue],
    judged_from: JudgedFrom = "transcript",
) -> dict[str, JSONObject]:
    """The per-system summary; ``judged_from`` is what the rubric judge reads (transcripts
    or the dialogue's audio), for the warnings about cues it cannot perceive."""
    store = ctx.store
    rows = store.scores.load()
    clusters = {row.item_id: row.item_id for row in rows}  # the dialogue is the unit
    summary = standard_summary(
        rows,
        metrics,
        seed=ctx.seed,
        units=store.units.status_counts(),
        clusters=clusters,
        cluster_unit="dialogue",
    )
    by_system = rows_by_system(rows)
    latencies = reply_latencies(ctx)
    transcript_only = transcript_only_counts(ctx)
    histograms = latency_histograms(
        {s: {f: [v for *_, v in points] for f, points in by.items()} for s, by in latencies.items()}
    )
    for system, entry in summary.items():
        by_field = latencies.get(system, {})
        add_distributions(
            entry,
            latency=histograms.get(system),
            latency_by_turn={f: turn_stats(p, seed=ctx.seed) for f, p in by_field.items()},
        )
        sys_rows = by_system.get(system, [])
        block = _rubric_block(sys_rows, dialogues, ctx.seed)
        if block:
            entry["rubric"] = block
        entry["judge"] = judge_accounting(sys_rows)
        counts = transcript_only.get(system)
        if counts and (counts["user_turns"] or counts["replies"]):
            entry["transcript_only"] = counts
        judged = {
            r.item_id for r in sys_rows if r.metric in JUDGED and r.ran and r.value is not None
        }
        warnings = cue_warnings(
            [dialogues[d] for d in sorted(judged) if d in dialogues], judged_from
        )
        if warnings:
            entry["judge"]["warnings"] = warnings
    return summary
