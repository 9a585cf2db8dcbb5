"""Write ``report/summary.json``, ``report/summary.md`` and ``report/scores.csv``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from voxeval import atomic_files
from voxeval.analysis.costs.costs import run_costs, run_price_table
from voxeval.api.context import RunContext
from voxeval.report.figure_html import FIGURES_DIR
from voxeval.report.figures import FigureGroup, build_figures
from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown
from voxeval.runformat import summary_text
from voxeval.store import layout
from voxeval.store.provenance import now_iso

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
SCORES_CSV = "scores.csv"
INDEX_HTML = "index.html"
COSTS_JSON = "costs.json"
CSV_FIELDS = [
    "item_id",
    "query_id",
    "profile",
    "engine",
    "noise_category",
    "system",
    "trial",
    "condition",
    "category",
    "metric",
    "value",
    "passed",
    "error",
]


UNIT_TOTALS = ("done", "failed", "pending", "pending_metrics")


def unit_totals(per_system: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's unit counts summed over systems (per-cause counts merged)."""
    totals: dict[str, Any] = {key: 0 for key in UNIT_TOTALS}
    totals["system_faults"], totals["failed_by_cause"] = {}, {}
    for counts in per_system:
        for key in UNIT_TOTALS:
            totals[key] += int(counts.get(key, 0))
        for key in ("system_faults", "failed_by_cause"):
            for cause, n in (counts.get(key) or {}).items():
                totals[key][cause] = totals[key].get(cause, 0) + int(n)
    return totals


def build_summary(ctx: RunContext) -> dict[str, Any]:
    """The protocol's per-system summary plus unit counts, usage and run metadata."""
    store = ctx.store
    counts = store.units.status_counts()
    protocol = ctx.require_protocol()
    systems: dict[str, Any] = dict(protocol.summarize(ctx))
    usage = store.usage.summary()
    for name, entry in systems.items():
        if isinstance(entry, dict):
            # the full unit counts (system faults and failures by cause, pending scores),
            # whatever subset the protocol's summary kept
            entry["units"] = {**(entry.get("units") or {}), **counts.get(name, {})}
            entry["units"].update({k: entry["units"].get(k, 0) for k in UNIT_TOTALS})
            entry.setdefault("usage", usage["by_system"].get(name))
    suite = ctx.suite
    document: dict[str, Any] = {
        "run_id": store.run_id,
        "suite": {
            "name": suite.name if suite else ctx.config.suite,
            "protocol": suite.protocol if suite else None,
            "description": suite.description if suite else "",
        },
        "seed": ctx.seed,
        "generated_at": now_iso(),
        "provenance": layout.RUN_FILE,
        "systems": systems,
        "usage": usage,
        "units": unit_totals(counts.values()),
        # {step: {"done", "pending", "failed", "not_run"}} of the comparisons across systems
        "comparisons": store.comparisons.counts(),
    }
    # {dimension: {engines, separated, note}}: speaker-profile dimensions confounded with the
    # TTS engine in the rendered suite (protocols that render speech say so)
    document["confounded"] = protocol.confounded(ctx)
    # {condition: stat}: how well the scoring ASR heard the user side (single-turn)
    document["input_intelligibility"] = protocol.input_intelligibility(ctx)
    # {profile: {voice, engine, naturalness, note}}: who spoke each profile's queries, and a
    # note where no natural voice exists for it (protocols that render speech say so)
    document["voices"] = protocol.voices(ctx)
    for step, step_summary in protocol.summarize_comparisons(ctx).items():
        document.setdefault(step, step_summary)  # e.g. summary["pairwise"]
    # Each system is also reachable as summary[SYSTEM] (the documented per-system view);
    # RunConfig rejects system names that would collide with the keys above.
    for name, entry in systems.items():
        document.setdefault(name, entry)
    return document


def scores_csv(ctx: RunContext) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    # Protocols that render items (single-turn) name each item's query, speaker profile,
    # engine and noise category; other protocols leave those columns empty.
    attributes = ctx.require_protocol().item_attributes(ctx)
    for row in ctx.store.scores.load():
        attrs = attributes.get(row.item_id) or {}
        writer.writerow(
            {
                "item_id": row.item_id,
                "query_id": attrs.get("query_id", ""),
                "profile": attrs.get("profile", ""),
                "engine": attrs.get("engine", ""),
                "noise_category": attrs.get("noise_category", ""),
                "system": row.system,
                "trial": row.trial,
                "condition": row.condition,
                "category": row.category,
                "metric": row.metric,
                "value": "" if row.value is None else repr(float(row.value)),
                "passed": "" if row.passed is None else str(row.passed).lower(),
                "error": row.error or "",
            }
        )
    return buffer.getvalue()


def write_costs(ctx: RunContext, prices: str | Path | None = None) -> dict[str, Any]:
    """Price the run (``prices``, else the config's ``pricing``, else the packaged example
    table) and write report/costs.json; returns the cost document."""
    costs = run_costs(ctx.store, run_price_table(ctx.config, prices))
    text = json.dumps(costs, indent=2, default=str, allow_nan=False) + "\n"
    atomic_files.write_text_atomic(ctx.store.report_dir / COSTS_JSON, text)
    return costs


def write_figures(report_dir: Path, groups: Iterable[FigureGroup]) -> None:
    """Each figure as ``figures/<name>.svg``; SVGs of an earlier report that this one no
    longer draws are removed, so no link shows stale numbers."""
    folder = report_dir / FIGURES_DIR
    names = set()
    for group in groups:
        for figure in group.figures:
            names.add(f"{figure.name}.svg")
            atomic_files.write_text_atomic(folder / f"{figure.name}.svg", figure.svg)
    if folder.is_dir():
        for stale in folder.glob("*.svg"):
            if stale.name not in names:
                stale.unlink()


def write_report(ctx: RunContext, prices: str | Path | None = None) -> Path:
    """Write summary.json, summary.md, scores.csv, index.html, figures/*.svg and costs.json
    (priced with ``prices``, see ``write_costs``); returns summary.md."""
    report_dir = ctx.store.report_dir
    with ctx.store.reading_once():  # the summary, the costs and scores.csv read one snapshot
        summary = build_summary(ctx)
        summary["costs"] = write_costs(ctx, prices)
        csv_text = scores_csv(ctx)
    # through the run format's model: what is written always validates as a summary
    text = summary_text(summary, report_dir / SUMMARY_JSON)
    # figures are drawn from the summary as written (the JSON round trip), so they equal it
    figures = build_figures(json.loads(text))
    atomic_files.write_text_atomic(report_dir / SUMMARY_JSON, text)
    write_figures(report_dir, figures)
    atomic_files.write_text_atomic(report_dir / SUMMARY_MD, render_markdown(summary, figures))
    atomic_files.write_text_atomic(report_dir / SCORES_CSV, csv_text)
    atomic_files.write_text_atomic(report_dir / INDEX_HTML, render_html(summary, figures))
    return report_dir / SUMMARY_MD
