"""The report's "Figures" section in HTML (each inline SVG with its text alternative and its
data table) and in Markdown (links to ``figures/<name>.svg``)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from voxeval.report.blocks import fmt_num
from voxeval.report.figures.svg import Cell, DataTable, Figure, FigureGroup

FIGURES_DIR = "figures"
HEADING = "Figures"
INTRO = (
    "Drawn from summary.json when the report was written. Points and bars are means; "
    "whiskers are 95% confidence intervals that resample the independent unit (no whisker: "
    "the data give no interval, see the tables). Open “Data” under a figure for its numbers."
)
STYLE = """
div.figure-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(26em, 1fr));
  gap: 0 1.5em; }
figure.report-figure { margin: 0.5em 0 1.5em; min-width: 0; }
figure.report-figure svg { width: 100%; height: auto; }
figure.report-figure figcaption { font-size: 0.9em; color: #333; margin: 0.2em 0; }
figure.report-figure table { font-size: 0.85em; }
p.figure-note { color: #555; font-style: italic; }
"""


def _cell_html(cell: Cell) -> str:
    if isinstance(cell, float):
        # the exact value for readers and tests; the text is rounded like the other tables
        return f'<td data-value="{cell!r}">{escape(fmt_num(cell))}</td>'
    if cell is None:
        return "<td>–</td>"
    return f"<td>{escape(str(cell))}</td>"


def data_table_html(name: str, table: DataTable) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = "".join("<tr>" + "".join(_cell_html(c) for c in row) + "</tr>" for row in table.rows)
    return (
        f'<table class="figure-data" data-figure="{escape(name)}"><thead><tr>{head}</tr>'
        f"</thead><tbody>{body}</tbody></table>"
    )


def figure_html(figure: Figure) -> str:
    label = escape(f"{figure.title}. {figure.description}")
    return (
        f'<figure class="report-figure" id="figure-{escape(figure.name)}">'
        f'<div class="figure-image" aria-label="{label}">{figure.inline_svg}</div>'
        f"<figcaption>{escape(figure.description)}</figcaption>"
        f"<details><summary>Data: {escape(figure.title)}</summary>"
        f"{data_table_html(figure.name, figure.table)}</details></figure>"
    )


def figures_html(groups: Sequence[FigureGroup]) -> str:
    if not groups:
        return ""
    parts = [f'<section id="figures"><h2>{HEADING}</h2><p>{escape(INTRO)}</p>']
    for group in groups:
        parts.append(f"<h3>{escape(group.heading)}</h3>")
        parts += [f'<p class="figure-note">{escape(note)}</p>' for note in group.notes]
        if group.figures:
            parts.append('<div class="figure-grid">')
            parts += [figure_html(figure) for figure in group.figures]
            parts.append("</div>")
    parts.append("</section>")
    return "\n".join(parts)


def figures_markdown(groups: Sequence[FigureGroup]) -> list[str]:
    """Lines linking each figure's SVG file (``figures/<name>.svg`` beside summary.md)."""
    if not groups:
        return []
    intro = INTRO.split(" Open ")[0] + " The numbers of each figure are in its data table in "
    intro += "index.html and in summary.json."
    lines = [f"## {HEADING}", "", intro, ""]
    for group in groups:
        lines += [f"### {group.heading}", ""]
        lines += [line for note in group.notes for line in (f"_{note}_", "")]
        for figure in group.figures:
            lines += [f"![{figure.title}]({FIGURES_DIR}/{figure.name}.svg)", ""]
    return lines
