"""Render the report document as Markdown (``report/summary.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from voxeval.json_types import JSONReadObject
from voxeval.report.document import (
    Block,
    BulletList,
    Heading,
    Paragraph,
    build_document,
)
from voxeval.report.figure_html import figures_markdown
from voxeval.report.figures import FigureGroup
from voxeval.report.html import figures_position
from voxeval.report.json_fields import section, whole_total


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def block_markdown(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return ["#" * block.level + " " + block.text, ""]
    if isinstance(block, Paragraph):
        return [block.text, ""]
    if isinstance(block, BulletList):
        return [*(f"- {_cell(item)}" for item in block.items), ""]
    lines = ["| " + " | ".join(block.header) + " |", "|" + "---|" * len(block.header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
    return [*lines, ""]


def _by_cause(counts: JSONReadObject) -> str:
    return ", ".join(f"{cause} {n}" for cause, n in sorted(counts.items()))


def failure_warnings(entry: JSONReadObject) -> list[str]:
    """Lines that say which units a system's numbers leave out or score as failures."""
    units = entry.get("units")
    if not isinstance(units, Mapping):
        return []
    lines = []
    failed = section(units.get("failed_by_cause"))
    if units.get("failed"):
        causes = f" ({_by_cause(failed)})" if failed else ""
        lines.append(
            f"**Warning:** {units['failed']} units failed on voxeval's side{causes} and are "
            "excluded from every mean; run again to retry them."
        )
    if units.get("pending_metrics"):
        lines.append(
            f"**Warning:** {units['pending_metrics']} scores are pending (a judge or scoring "
            "service failed) and are excluded from their metric's mean; run again or "
            "`voxeval score` to retry them."
        )
    faults = section(units.get("system_faults"))
    if faults:
        lines.append(
            f"**Note:** {whole_total(faults)} units are failures of the system under test "
            f"({_by_cause(faults)}), scored with each metric's worst value."
        )
    return lines


def render_markdown(summary: JSONReadObject, figures: Sequence[FigureGroup] | None = None) -> str:
    """The Markdown report; ``figures`` (written as ``figures/<name>.svg`` beside it by
    ``write_report``) are linked in a "Figures" section, none when not given."""
    lines: list[str] = []
    systems = iter(section(summary.get("systems")).values())
    blocks = build_document(summary)
    at = figures_position(blocks)
    for i, block in enumerate(blocks):
        if i == at:
            lines += figures_markdown(figures or [])
        lines += block_markdown(block)
        # build_document heads each system's section "System NAME", in summary order
        if isinstance(block, Heading) and block.level == 2 and block.text.startswith("System "):
            entry = next(systems, None)
            if isinstance(entry, Mapping):
                lines += [line for warning in failure_warnings(entry) for line in (warning, "")]
    if at == len(blocks):
        lines += figures_markdown(figures or [])
    return "\n".join(lines).rstrip() + "\n"
