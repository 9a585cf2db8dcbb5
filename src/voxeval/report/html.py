"""Render the report document as one self-contained HTML page (``report/index.html``)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from voxeval.report.document import Block, BulletList, Heading, Paragraph, build_document

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


def render_html(summary: Mapping[str, Any]) -> str:
    suite = (summary.get("suite") or {}).get("name", "?")
    body = "\n".join(block_html(b) for b in build_document(summary))
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'>"
        f"<title>voxeval report: {escape(str(suite))}</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )
