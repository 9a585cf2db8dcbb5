"""Single-turn breakdowns beyond category and condition: who spoke the query (gender, age,
timbre), which TTS engine rendered it, which noise category was mixed in, and the latency of
the replies.

Each rendered item carries these attributes in the builder's manifest entry; a released
recording (no TTS) has the engine ``recorded``, and a field the builder left unset is
``unspecified`` so its rows still appear in the table. Groups resample the query like every
other interval of the protocol."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from voxeval.analysis.aggregate import group_stats
from voxeval.analysis.corpus_wer import corpus_wer_fields
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.store.records import ScoreRow

UNSPECIFIED = "unspecified"
# summary key -> the item attribute it groups by
BREAKDOWNS: dict[str, str] = {
    "by_gender": "gender",
    "by_age": "age",
    "by_timbre": "timbre",
    "by_engine": "engine",
    "by_noise_category": "noise_category",
}
# The timings a reply may store (``systems.base.Reply.timing``) plus the harness's wall clock.
LATENCY_FIELDS = ("first_audio_s", "total_s", "wall_s")
LATENCY_QUANTILES = {"p50": 0.5, "p90": 0.9}


def item_attributes(item: RenderedQuery) -> dict[str, str]:
    """The reporting attributes of one rendered item (also the extra ``scores.csv`` columns)."""
    entry = item.entry
    fields = entry.get("profile_fields") or {}
    noise = entry.get("noise")
    if item.condition == "clean":
        noise_category = "none"
    elif isinstance(noise, Mapping) and noise.get("category"):
        noise_category = str(noise["category"])
    else:  # a released noisy recording: its noise is whatever the condition says
        noise_category = item.condition
    engine = entry.get("engine") or ("recorded" if entry.get("voice") == "recorded" else None)
    return {
        "query_id": item.query.id,
        "profile": item.profile,
        "gender": str(fields.get("gender") or UNSPECIFIED),
        "age": str(fields.get("age") or UNSPECIFIED),
        "timbre": str(fields.get("timbre") or UNSPECIFIED),
        "engine": str(engine or UNSPECIFIED),
        "condition": item.condition,
        "noise_category": noise_category,
    }


def breakdown_stats(
    rows: Sequence[ScoreRow],
    attributes: Mapping[str, Mapping[str, str]],
    attribute: str,
    metrics: Sequence[str],
    *,
    seed: int,
    clusters: Mapping[str, str],
    rates: Collection[str],
) -> dict[str, JSONObject]:
    """``{group: {metric: stat}}`` of one system's ``rows`` grouped by an item attribute; the
    ``wer`` stat gets the corpus WER and median of its group. Rows of items without
    attributes (the rendered suite is gone) are left out."""
    groups: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        attrs = attributes.get(row.item_id)
        if attrs is not None:
            groups[attrs[attribute]].append(row)
    out: dict[str, dict[str, Any]] = {}
    for group in sorted(groups):
        stats: dict[str, Any] = group_stats(
            groups[group], metrics, seed=seed, clusters=clusters, rates=rates
        )
        if not stats:
            continue
        if isinstance(stats.get("wer"), dict):
            stats["wer"].update(corpus_wer_fields(r for r in groups[group] if r.metric == "wer"))
        out[group] = stats
    return out


def add_breakdowns(
    entry: dict[str, JSONReadValue],
    rows: Sequence[ScoreRow],
    attributes: Mapping[str, Mapping[str, str]],
    *,
    seed: int,
    clusters: Mapping[str, str],
    rates: Collection[str],
) -> None:
    """Add every ``BREAKDOWNS`` grouping to one system's summary entry (in place), over the
    metrics its ``overall`` reports. A grouping with a single group says nothing and is
    left out."""
    overall = entry.get("overall") or {}
    metrics = list(overall) if isinstance(overall, Mapping) else []
    for key, attribute in BREAKDOWNS.items():
        stats = breakdown_stats(
            rows, attributes, attribute, metrics, seed=seed, clusters=clusters, rates=rates
        )
        if len(stats) > 1:
            entry[key] = stats


def latency_summary(timings: Sequence[JSONReadObject]) -> dict[str, JSONObject]:
    """``{field: {"p50", "p90", "n"}}`` over the replies that stored a numeric ``field``
    (linear-interpolated quantiles); fields no reply stored are left out."""
    out: dict[str, dict[str, Any]] = {}
    for name in LATENCY_FIELDS:
        values = [
            float(v)
            for v in (t.get(name) for t in timings)
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        if not values:
            continue
        array = np.asarray(values, dtype=float)
        summary: dict[str, Any] = {
            label: float(np.quantile(array, q)) for label, q in LATENCY_QUANTILES.items()
        }
        summary["n"] = len(values)
        out[name] = summary
    return out


def answered_timings(reply_files: Sequence[Path]) -> list[JSONObject]:
    """The ``timing`` of each stored reply that answered (a failed reply has no latency to
    report: it is counted among the system faults)."""
    timings = []
    for path in reply_files:
        try:
            reply = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a unit whose reply was never stored (failed on our side)
        if isinstance(reply, dict) and not reply.get("system_fault"):
            timing = reply.get("timing")
            if isinstance(timing, dict):
                timings.append(timing)
    return timings
