"""A run comparison as report blocks, rendered to Markdown (``comparison.md``) and to one
self-contained HTML page (``comparison.html``): regressions in red, improvements in green,
and always a text marker too, so the flags do not rest on colour alone."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from voxeval import atomic_files
from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock, fmt_num
from voxeval.report.blocks import fmt_mean_ci as _fmt_mean_ci
from voxeval.report.html import STYLE, block_html
from voxeval.report.json_fields import (
    as_float,
    entries,
    objects,
    section,
    sections,
    whole_total,
)
from voxeval.report.markdown import block_markdown
from voxeval.report.run_compare import CHANGED, IMPROVEMENT, REGRESSION, RunComparison
from voxeval.report.unit_plural import unit_plural

MARKERS = {REGRESSION: "▼ REGRESSION", IMPROVEMENT: "▲ improvement", CHANGED: "◆ changed"}
ITEM_MARKERS = {REGRESSION: "▼ worse", IMPROVEMENT: "▲ better"}
MAX_ITEM_ROWS = 10  # per metric and run: the largest changes (comparison.json has them all)
COMPARE_STYLE = """
tr.regression td { background: #fde2e1; color: #7a0b07; }
tr.improvement td { background: #dff3e3; color: #0b5d1e; }
tr.changed td { background: #fff4d6; }
.warning { color: #7a4b00; }
"""


@dataclass(frozen=True)
class FlaggedTable(TableBlock):
    """A table whose rows may carry a flag (``regression``, ``improvement``, ``changed``)."""

    flags: list[str | None] = field(default_factory=list)


def fmt_mean_ci(stat: JSONReadObject | None) -> str:
    return _fmt_mean_ci(stat) if stat else "–"


def marker(flag: str | None) -> str:
    return MARKERS.get(flag or "", "")


def _flag(value: JSONReadValue) -> str | None:
    """A comparison's flag (``regression``, ``improvement``, ``changed``) or None."""
    return value if isinstance(value, str) else None


def _runs_block(data: JSONReadObject) -> list[Block]:
    header = ["run", "suite version", "seed", "judge", "voxeval", "commit", "date"]
    rows = [
        [
            str(r["run_id"]) + (" (baseline)" if i == 0 else ""),
            str(r.get("suite_version") or "–"),
            str(r.get("seed")),
            str(r.get("judge") or "none"),
            str(r.get("voxeval_version") or "–"),
            str(r.get("commit") or "–"),
            str(r.get("date") or "–"),
        ]
        for i, r in enumerate(objects(data["runs"]))
    ]
    return [Heading(2, "Runs"), TableBlock(header, rows)]


def _flags_block(data: JSONReadObject) -> list[Block]:
    flags = objects(data.get("flags"))
    if not flags:
        return [
            Heading(2, "Flags"),
            Paragraph(
                "No metric changed significantly after the Holm adjustment "
                f"(alpha {fmt_num(data['alpha'])})."
            ),
        ]
    header = ["flag", "system", "metric", "run", "against", "delta", "p (Holm)"]
    rows = [
        [marker(_flag(f["flag"])), str(f["system"]), str(f["metric"]), str(f["run"]),
         str(f["baseline"]), fmt_num(f["delta"]), fmt_num(f["p_holm"])]
        for f in flags
    ]  # fmt: skip
    return [Heading(2, "Flags"), FlaggedTable(header, rows, [_flag(f["flag"]) for f in flags])]


def _unpaired_text(counts: JSONReadObject) -> str:
    parts = []
    for run, kinds in sections(counts):
        listed = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        parts.append(f"{run}: {listed}")
    return "; ".join(parts) or "–"


def _metric_rows(metric: str, entry: JSONReadObject) -> tuple[list[list[str]], list[str | None]]:
    rows: list[list[str]] = []
    flags: list[str | None] = []
    runs = section(entry["runs"])
    for c in objects(entry["comparisons"]):
        rows.append(
            [
                metric,
                str(entry.get("better") or "descriptive"),
                str(c["run"]),
                fmt_mean_ci(section(runs.get(str(c["baseline"]))) or None),
                fmt_mean_ci(section(runs.get(str(c["run"]))) or None),
                fmt_mean_ci(section(c["delta"]) or None) if c["paired_clusters"] else "–",
                f"{c['paired_items']} ({c['paired_clusters']})",
                fmt_num(c["p_value"]),
                fmt_num(c["p_holm"]),
                marker(_flag(c["flag"])),
                _unpaired_text(section(c["unpaired"])),
            ]
        )
        flags.append(_flag(c["flag"]))
    return rows, flags


def _badness(better: str | None, delta: float) -> float:
    return -delta if better == "higher" else delta if better == "lower" else abs(delta)


def _item_blocks(metric: str, entry: JSONReadObject, unit: str) -> list[Block]:
    blocks: list[Block] = []
    for c in objects(entry["comparisons"]):
        changed = [i for i in objects(c["items"]) if i["delta"] != 0]
        if not changed:
            continue
        named = entry.get("better")
        better = named if isinstance(named, str) else None
        changed.sort(
            key=lambda i: (
                -_badness(better, as_float(i["delta"])),
                str(i["item_id"]),
                str(i["condition"]),
            )
        )
        shown = changed[:MAX_ITEM_ROWS]
        flags: list[str | None] = [
            (REGRESSION if _badness(better, as_float(i["delta"])) > 0 else IMPROVEMENT)
            if better
            else None
            for i in shown
        ]
        rows = [
            [str(i["item_id"]), str(i["condition"]), str(i["cluster"]), fmt_num(i["baseline"]),
             fmt_num(i["value"]), fmt_num(i["delta"]), ITEM_MARKERS.get(flag or "", "")]
            for i, flag in zip(shown, flags, strict=True)
        ]  # fmt: skip
        note = f"{len(changed)} of {c['paired_items']} paired items changed"
        if len(changed) > len(shown):
            note += f"; the {len(shown)} largest (worst first) are shown"
        blocks += [
            Heading(4, f"{metric}: {c['run']} against {c['baseline']}"),
            Paragraph(note + "."),
            FlaggedTable(
                ["item", "condition", unit, "baseline", "run", "delta", "change"], rows, flags
            ),
        ]
    return blocks


def _system_blocks(name: str, entry: JSONReadObject, unit: str) -> list[Block]:
    blocks: list[Block] = [Heading(2, f"System {name}")]
    header = [
        "metric", "better", "run", "baseline mean [95% CI]", "run mean [95% CI]",
        f"delta [95% CI over {unit_plural(unit)}]", f"paired items ({unit_plural(unit)})", "p",
        "p (Holm)", "flag",
        "unpaired",
    ]  # fmt: skip
    rows: list[list[str]] = []
    flags: list[str | None] = []
    for metric, m in sections(entry["metrics"]):
        r, f = _metric_rows(metric, m)
        rows += r
        flags += f
    if rows:
        blocks.append(FlaggedTable(header, rows, flags))
    else:
        blocks.append(Paragraph("No metric to compare."))
    failed = []
    for run, counts in sections(entry.get("units")):
        if counts.get("failed"):
            by_cause = section(counts["failed_by_cause"])
            causes = ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items()))
            failed.append(
                f"{run}: {counts['failed']} units failed on voxeval's side ({causes}); they "
                "are excluded from that run's means and listed as unpaired"
            )
        faults = counts.get("system_faults")
        if section(faults):
            failed.append(
                f"{run}: {whole_total(faults)} units are failures of the system under test, "
                "scored with each metric's worst value"
            )
    if failed:
        blocks.append(BulletList(failed))
    if entry.get("not_compared"):
        blocks.append(
            BulletList(
                [f"{m}: not compared ({r})" for m, r in section(entry["not_compared"]).items()]
            )
        )
    items: list[Block] = []
    for metric, m in sections(entry["metrics"]):
        items += _item_blocks(metric, m, unit)
    if items:
        blocks += [Heading(3, "Items that changed"), *items]
    return blocks


def comparison_blocks(data: JSONReadObject) -> list[Block]:
    """The blocks of a comparison, from ``RunComparison.to_dict()``."""
    suite = section(data["suite"])
    unit = str(suite.get("unit") or "item")
    blocks: list[Block] = [
        Heading(1, f"Run comparison: {suite['name']} ({suite['protocol']})"),
        Paragraph(
            f"Baseline: {data['baseline']} (each system's first run). A delta is the run's "
            "value minus the baseline's over the items scored in both (trials averaged within "
            f"an item, items within a {unit}). Its interval and the test ({data['test']}) "
            f"resample the {unit}. P-values are adjusted with {data['correction']}; a flag "
            f"needs an adjusted p below {fmt_num(data['alpha'])}."
        ),
    ]
    blocks += _runs_block(data)
    if data.get("warnings"):
        blocks += [Heading(2, "Warnings"), BulletList([str(w) for w in entries(data["warnings"])])]
    blocks += _flags_block(data)
    for name, entry in sections(data["systems"]):
        blocks += _system_blocks(name, entry, unit)
    if data.get("not_compared_systems"):
        blocks += [
            Heading(2, "Systems not compared"),
            BulletList([f"{s}: {r}" for s, r in section(data["not_compared_systems"]).items()]),
        ]
    return blocks


def render_comparison_markdown(data: JSONReadObject) -> str:
    lines: list[str] = []
    for block in comparison_blocks(data):
        lines += block_markdown(block)
    return "\n".join(lines).rstrip() + "\n"


def _table_html(block: FlaggedTable) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in block.header)
    body = []
    for row, flag in zip(block.rows, block.flags, strict=True):
        cls = f" class='{flag}'" if flag else ""
        cells = "".join(f"<td>{escape(c)}</td>" for c in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_comparison_html(data: JSONReadObject) -> str:
    parts = [
        _table_html(b) if isinstance(b, FlaggedTable) else block_html(b)
        for b in comparison_blocks(data)
    ]
    title = f"voxeval comparison: {section(data['suite'])['name']}"
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{STYLE}{COMPARE_STYLE}</style></head>"
        "<body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


COMPARISON_FILES = ("comparison.json", "comparison.md", "comparison.html")


def write_comparison(comparison: RunComparison, out_dir: Path | str) -> list[Path]:
    """Write ``comparison.json``, ``comparison.md`` and ``comparison.html`` into ``out_dir``
    (created); the same runs give the same bytes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = comparison.to_dict()
    texts = (
        json.dumps(data, indent=2, allow_nan=False) + "\n",
        render_comparison_markdown(data),
        render_comparison_html(data),
    )
    paths = [out / name for name in COMPARISON_FILES]
    for path, text in zip(paths, texts, strict=True):
        atomic_files.write_text_atomic(path, text)
    return paths
