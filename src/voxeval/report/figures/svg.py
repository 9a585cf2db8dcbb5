"""A report figure (its SVG, text alternative and data table) and the deterministic
matplotlib-to-SVG step: a fixed hash salt, no date, fonts as paths and no pyplot state."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from voxeval.report.figures.style import RC

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

Cell = str | float | int | None


@dataclass(frozen=True)
class DataTable:
    """The numbers a figure draws, as the summary holds them (floats unrounded)."""

    header: list[str]
    rows: list[list[Cell]]


@dataclass(frozen=True)
class Figure:
    name: str  # unique in a report; the file is report/figures/<name>.svg
    title: str
    description: str  # the text alternative: what is drawn, in one or two sentences
    svg: str  # the whole SVG document
    table: DataTable

    @property
    def inline_svg(self) -> str:
        """The SVG element alone, with a ``<title>``, for embedding in HTML."""
        start = self.svg.index("<svg")
        head_end = self.svg.index(">", start) + 1
        head = self.svg[start:head_end].replace("<svg", '<svg role="img"', 1)
        title = f"<title>{escape(self.title)}: {escape(self.description)}</title>"
        return head + title + self.svg[head_end:]


@dataclass
class FigureGroup:
    """Figures of one family under a heading, and why any expected figure is not drawn."""

    heading: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def new_figure(size: tuple[float, float]) -> MplFigure:
    from matplotlib.figure import Figure as MplFigure

    return MplFigure(figsize=size, layout="constrained")


def render_svg(name: str, draw: Callable[[], MplFigure]) -> str:
    """Draw with the shared style and save as SVG. The salt is the figure's name, so ids are
    the same on every run and differ between the figures inlined in one page."""
    import matplotlib

    settings: Any = {**RC, "svg.hashsalt": name, "svg.id": f"svg-{name}"}
    with matplotlib.rc_context(settings):
        figure = draw()
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
