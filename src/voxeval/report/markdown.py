"""Render the report document as Markdown (``report/summary.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voxeval.report.document import (
    Block,
    BulletList,
    Heading,
    Paragraph,
    build_document,
)


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


def render_markdown(summary: Mapping[str, Any]) -> str:
    lines: list[str] = []
    for block in build_document(summary):
        lines += block_markdown(block)
    return "\n".join(lines).rstrip() + "\n"
