"""The "Rubric scores" section of a system in the report, from the multi-turn summary's
``rubric`` entry (``voxeval.protocols.multi_turn_summary``): the model score x100 overall and
per dimension, its per-level and per-capability breakdowns, and the turn-level curve."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import Block, Heading, Paragraph, TableBlock, fmt_mean_ci
from voxeval.report.json_fields import section, sections

LEVELS = ("general", "dimension", "sample")


def _cell(stats: JSONReadValue, key: str) -> str:
    stat = stats.get(key) if isinstance(stats, Mapping) else None
    return fmt_mean_ci(stat) if isinstance(stat, Mapping) else "–"


def _row(label: str, block: JSONReadObject) -> list[str]:
    levels = section(block.get("by_level"))
    stat = block.get("model_score")
    n = str(stat.get("n", "")) if isinstance(stat, Mapping) else ""
    return [label, _cell(block, "model_score"), *(_cell(levels, lv) for lv in LEVELS), n]


def _judged_from(rubric: JSONReadObject) -> str:
    heard = str(rubric.get("judged_from") or "transcript")
    where = (
        "judged from audio (the audio judge heard each dialogue)"
        if heard == "audio"
        else (
            f"judged from {heard.replace('+', ' and ')}"
            if "+" in heard
            else "judged from annotated transcripts"
        )
    )
    protocol = rubric.get("protocol")
    return f"Criteria {where}" + (f"; protocol {protocol}." if protocol else ".")


def rubric_blocks(rubric: JSONReadValue) -> list[Block]:
    if not isinstance(rubric, Mapping) or not rubric:
        return []
    dims = dict(sections(rubric.get("by_dimension")))
    header = ["dimension", "model score x100 [95% CI]", *LEVELS, "dialogues"]
    rows = [_row("all", rubric)] + [_row(d, b) for d, b in dims.items()]
    blocks: list[Block] = [
        Heading(3, "Rubric scores"),
        Paragraph(
            "Share of rubric criteria met x100 (S_case averaged over dialogues); CIs resample "
            "dialogues. Levels: general, dimension and sample criteria. " + _judged_from(rubric)
        ),
        TableBlock(header, rows),
    ]
    caps = [
        [dim, cap, fmt_mean_ci(stat), str(stat.get("n", ""))]
        for dim, block in dims.items()
        for cap, stat in sections(block.get("by_capability"))
    ]
    if caps:
        blocks += [
            Heading(4, "By capability (tier 1)"),
            TableBlock(["dimension", "capability", "model score x100 [95% CI]", "dialogues"], caps),
        ]
    prefixes = list(section(rubric.get("turns")))
    if prefixes:
        curve_rows = [
            [label, *(_cell(block.get("turns"), p) for p in prefixes)]
            for label, block in [("all", rubric), *dims.items()]
        ]
        blocks += [
            Heading(4, "Turn level (dialogue truncated after turn k)"),
            Paragraph("General and dimension criteria only, x100."),
            TableBlock(["dimension", *prefixes], curve_rows),
        ]
    return blocks
