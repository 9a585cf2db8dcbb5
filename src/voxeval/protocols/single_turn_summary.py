"""The single-turn report: the standard per-system summary plus PF subcategories, MOS per
category, judge reliability and cost, and transcript-filter counts.

The independent unit is the query: its rendered items (one per voice and condition) and their
trials are resampled together. A rendered item's query comes from the built suite's manifest
(``query_ids``); when the rendered folder is gone it is read back from the item id, which the
builder forms as ``<query id>__<profile>__<condition>``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from voxeval.analysis.aggregate import group_stats, rate_metrics, rows_by_system, standard_summary
from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.corpus_wer import add_corpus_wer
from voxeval.api.context import RunContext
from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.protocols.single_turn_breakdowns import (
    LATENCY_FIELDS,
    add_breakdowns,
    answered_timings,
    latency_summary,
)
from voxeval.protocols.summary_distributions import (
    add_distributions,
    latency_histograms,
    mos_histograms,
)
from voxeval.store.records import ScoreRow

# Single-turn replies carry the timings the system's own reply reported; nothing is modelled
# and voxeval renders nothing on a system's behalf.
SINGLE_TURN_BASIS: dict[str, Any] = {
    "agent": "measured",
    "measured_by": "system",
    "compute_lane": False,
    "rendering_by_voxeval": None,
}


def judge_accounting(rows: Sequence[ScoreRow]) -> JSONObject:
    """Judge calls, parse failures (and their rate) and cost over the checklist scores, and
    how many checklist scores average fewer transcripts than k (the judge gave no readable
    score for some)."""
    calls = failures = 0
    cost: float | None = None
    unreadable = below_k = 0
    setting: dict[str, Any] | None = None
    for row in rows:
        if row.metric != "checklist":
            continue
        d = row.details
        if setting is None and isinstance(d.get("judge_setting"), dict):
            setting = judge_setting(d)
        calls += int(d.get("judge_calls") or 0)
        failures += int(d.get("parse_failures") or 0)
        if d.get("cost_usd") is not None:
            cost = (cost or 0.0) + float(d["cost_usd"])
        unreadable += sum(1 for s in d.get("scores") or () if s is None)
        used, k = d.get("transcripts_used"), d.get("k")
        if row.ran and used is not None and k is not None and int(used) < int(k):
            below_k += 1
    return {
        "calls": calls,
        "parse_failures": failures,
        "parse_failure_rate": failures / calls if calls else None,
        "transcripts_without_score": unreadable,
        "scores_over_fewer_than_k_transcripts": below_k,
        "cost_usd": cost,
        **({"setting": setting} if setting else {}),
    }


def judge_setting(details: JSONObject) -> JSONObject:
    """The checklist judge's setting as a score recorded it: protocol, model, sampling and
    prompt (what a reader needs to compare scores with a published table)."""
    judge = details.get("judge") or {}
    llm = judge.get("llm") if isinstance(judge, dict) else None
    model = llm.get("model") if isinstance(llm, dict) else llm
    setting = details["judge_setting"]
    if not isinstance(setting, dict):
        raise TypeError(f"judge_setting is not a mapping: {setting!r}")
    return {**setting, "model": model}


def transcript_accounting(rows: Sequence[ScoreRow]) -> dict[str, int]:
    """Decodes rejected by the repetition filter, counted once per unit (several metrics of a
    unit share one transcript set and each reports the count)."""
    per_unit: dict[tuple[str, str, int], int] = {}
    for r in rows:
        count = r.details.get("transcripts_rejected")
        if count is not None:
            key = (r.item_id, r.condition, r.trial)
            per_unit[key] = max(per_unit.get(key, 0), int(count))
    return {
        "rejected_by_repetition_filter": sum(per_unit.values()),
        "units_with_transcripts": len(per_unit),
    }


def _is_number(value: JSONReadValue) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def query_id_from_item(item_id: str, condition: str) -> str:
    """The query of a rendered item id ``<query id>__<profile>__<condition>`` (the query id
    may itself contain ``__``); an id of another shape is its own query."""
    stem = item_id.removesuffix(f"__{condition}")
    query, sep, _profile = stem.rpartition("__")
    return query if stem != item_id and sep and query else item_id


def query_clusters(
    rows: Sequence[ScoreRow], query_ids: Mapping[str, str] | None = None
) -> dict[str, str]:
    """item id -> query id for every item in ``rows`` (manifest first, then the item id)."""
    known = query_ids or {}
    return {
        row.item_id: known.get(row.item_id) or query_id_from_item(row.item_id, row.condition)
        for row in rows
    }


def summarize_single_turn(
    ctx: RunContext,
    metrics: Sequence[str],
    subcategories: Mapping[str, str],
    labels: Mapping[str, str],
    query_ids: Mapping[str, str] | None = None,
    attributes: Mapping[str, Mapping[str, str]] | None = None,
    reply_file: str | None = None,
) -> dict[str, JSONObject]:
    """``query_ids`` maps rendered item ids to their query (see the module doc);
    ``attributes`` their reporting attributes (``single_turn_breakdowns.item_attributes``)
    for the speaker, engine and noise breakdowns; ``reply_file`` names the stored reply in a
    unit folder, whose timings give the latency summary."""
    store = ctx.store
    rows = store.scores.load()
    clusters = query_clusters(rows, query_ids)
    rates = rate_metrics(rows)
    summary = standard_summary(
        rows,
        metrics,
        seed=ctx.seed,
        units=store.units.status_counts(),
        clusters=clusters,
        cluster_unit="query",
    )
    # Corpus WER and median beside the mean, so one outlier reply cannot dominate the WER.
    add_corpus_wer(summary, rows, "wer")
    by_system = rows_by_system(rows)
    done_units: dict[str, list[Any]] = defaultdict(list)
    if reply_file is not None:
        for unit in store.units.records("done"):
            done_units[unit.system].append(unit)
    timings = {
        system: answered_timings([store.folder.unit_dir(u) / reply_file for u in units])
        for system, units in done_units.items()
        if reply_file is not None
    }
    latency_samples = {
        system: {
            name: [float(v) for v in (t.get(name) for t in found) if _is_number(v)]
            for name in LATENCY_FIELDS
        }
        for system, found in timings.items()
    }
    latency_hists = latency_histograms(latency_samples)
    mos_hists = mos_histograms(rows)
    for system, entry in summary.items():
        sys_rows = by_system.get(system, [])
        ran = list(entry.get("overall") or {})
        pf_groups: dict[str, list[ScoreRow]] = defaultdict(list)
        for row in sys_rows:
            sub = subcategories.get(row.item_id)
            if row.category == "PF" and sub:
                pf_groups[sub].append(row)
        entry["by_pf_subcategory"] = {
            sub: stats
            for sub, group in sorted(pf_groups.items())
            if (stats := group_stats(group, ran, seed=ctx.seed, clusters=clusters, rates=rates))
        }
        mos_groups: dict[str, list[float]] = defaultdict(list)
        mos_queries: dict[str, list[str]] = defaultdict(list)
        for row in sys_rows:
            if row.metric == "mos" and row.ran and row.value is not None:
                mos_groups[row.category].append(float(row.value))
                mos_queries[row.category].append(clusters[row.item_id])
        entry["mos_by_category"] = {
            cat: metric_stats(values, clusters=mos_queries[cat], seed=ctx.seed)
            for cat, values in sorted(mos_groups.items())
        }
        if attributes:
            add_breakdowns(
                entry, sys_rows, attributes, seed=ctx.seed, clusters=clusters, rates=rates
            )
        add_distributions(entry, mos=mos_hists.get(system), latency=latency_hists.get(system))
        if reply_file is not None:
            latency = latency_summary(timings.get(system, []))
            if latency:
                entry["latency"] = latency
                entry["latency_basis"] = dict(SINGLE_TURN_BASIS)
        entry["judge"] = judge_accounting(sys_rows)
        entry["transcripts"] = transcript_accounting(sys_rows)
        if system in labels:
            entry["label"] = labels[system]
    return summary
