"""Render the report document as one self-contained HTML page (``report/index.html``)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from voxeval.json_types import JSONReadObject
from voxeval.report.document import Block, BulletList, Heading, Paragraph, build_document
from voxeval.report.figure_html import STYLE as FIGURE_STYLE
from voxeval.report.figure_html import figures_html
from voxeval.report.figures import FigureGroup, build_figures
from voxeval.report.json_fields import section

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f3f3f3; }
td:nth-child(n+2) { font-variant-numeric: tabular-nums; }
"""


def block_html(block: Block) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{escape(block.text)}</h{block.level}>"
    if isinstance(block, Paragraph):
        return f"<p>{escape(block.text)}</p>"
    if isinstance(block, BulletList):
        return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in block.items) + "</ul>"
    head = "".join(f"<th>{escape(h)}</th>" for h in block.header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in block.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figures_position(blocks: Sequence[Block]) -> int:
    """Where the figures go: before the first system's section (after the run's header and
    the side-by-side table), or at the end."""
    for i, block in enumerate(blocks):
        if isinstance(block, Heading) and block.level == 2 and block.text.startswith("System "):
            return i
    return len(blocks)


def render_html(summary: JSONReadObject, figures: Sequence[FigureGroup] | None = None) -> str:
    """The page; ``figures`` = the summary's figures when already drawn (else drawn here)."""
    suite = section(summary.get("suite")).get("name", "?")
    blocks = build_document(summary)
    at = figures_position(blocks)
    groups = build_figures(summary) if figures is None else figures
    parts = [block_html(b) for b in blocks[:at]]
    parts += [figures_html(groups), *(block_html(b) for b in blocks[at:])]
    body = "\n".join(part for part in parts if part)
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>voxeval report: {escape(str(suite))}</title>"
        f"<style>{STYLE}{FIGURE_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )
