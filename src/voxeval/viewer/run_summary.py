"""The headline numbers of a run per system, from report/summary.json: every overall metric
with its mean, confidence interval and n, the protocol's own headline statistics
(task completion, pass^k ...) and what did not run, with the reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voxeval.json_types import JSONReadObject
from voxeval.report.arena_blocks import dimension_blocks
from voxeval.report.blocks import BulletList, Paragraph, TableBlock
from voxeval.report.document import cluster_noun, is_stat, metric_label, stat_cells
from voxeval.runformat import RunSummary

# Protocol-level statistics shown under the overall metrics when a summary has them.
HEADLINE_EXTRAS = ("task_completion", "turn_taking")


@dataclass(frozen=True)
class StatLine:
    metric: str
    label: str
    mean: str
    ci: str
    n: str


@dataclass(frozen=True)
class SystemSummary:
    name: str
    lines: list[StatLine] = field(default_factory=list)
    passk: list[StatLine] = field(default_factory=list)
    not_run: dict[str, str] = field(default_factory=dict)
    units: dict[str, Any] = field(default_factory=dict)


def _line(metric: str, stat: JSONReadObject, unit: str) -> StatLine:
    mean, ci, n = stat_cells(stat, unit)
    return StatLine(metric, metric_label(metric, stat), mean, ci, n)


def system_summaries(summary: RunSummary | None) -> list[SystemSummary]:
    out = []
    for name, system in (summary.systems if summary is not None else {}).items():
        entry = system.stored_data()  # the protocol's own sections are in the file's shape
        unit = cluster_noun(entry)
        overall = entry.get("overall") or {}
        lines = [_line(m, s, unit) for m, s in overall.items() if is_stat(s)]
        lines += [
            _line(key, entry[key], unit)
            for key in HEADLINE_EXTRAS
            if key not in overall and is_stat(entry.get(key))
        ]
        passk = [
            _line(f"{kind} k={p.get('k')}", p, unit)
            for kind in ("pass_at_k", "pass_hat_k")
            for p in entry.get(kind) or []
            if is_stat(p)
        ]
        out.append(
            SystemSummary(
                name=str(name),
                lines=lines,
                passk=passk,
                not_run=dict(system.not_run),
                units=system.units.to_data(),
            )
        )
    return out


@dataclass(frozen=True)
class ArenaTable:
    """One arena dimension as the report shows it: Elo and Bradley-Terry with intervals and
    rank intervals, unbounded and unrated systems said in words."""

    dimension: str
    text: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str]


def arena_tables(summary: RunSummary | None) -> list[ArenaTable]:
    """The arena ratings of ``summary`` per dimension (none for a run without an arena)."""
    arena = summary.section("arena") if summary is not None else None
    if arena is None:
        return []
    tables = []
    for dimension, block in (arena.get("dimensions") or {}).items():
        if not isinstance(block, Mapping):
            continue
        parts = dimension_blocks(str(dimension or "all"), block)
        table = next((b for b in parts if isinstance(b, TableBlock)), None)
        tables.append(
            ArenaTable(
                dimension=str(dimension or "all"),
                text=" ".join(b.text for b in parts if isinstance(b, Paragraph)),
                header=table.header if table else [],
                rows=table.rows if table else [],
                notes=[i for b in parts if isinstance(b, BulletList) for i in b.items],
            )
        )
    return tables
