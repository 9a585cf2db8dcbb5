"""Distributions from the summary's fixed-bin histograms (``distributions``): one stepped
outline per system on shared bins, so the systems overlay bin for bin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from voxeval.report.figures.style import LINE_STYLES, WIDE, colour, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.report.figures.svg import DataTable, Figure, new_figure, render_svg


def histogram_figure(
    name: str, title: str, histograms: Mapping[str, Mapping[str, Any]], xlabel: str
) -> Figure:
    """``histograms``: system -> ``{"edges", "counts", "below", "above", "n"}``. Each system
    is drawn as its share of values per bin, so systems with different n compare."""
    systems = [s for s, h in histograms.items() if h.get("n")]

    def draw() -> MplFigure:
        figure = new_figure(WIDE)
        ax = figure.add_subplot()
        for i, system in enumerate(systems):
            hist = histograms[system]
            shares = [c / hist["n"] for c in hist["counts"]]
            steps = ax.stairs(
                shares,
                hist["edges"],
                color=colour(i),
                linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                linewidth=1.6,
                label=f"{system} (n={hist['n']})",
            )
            steps.set_gid(f"{name}-hist-{slug(system)}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("share of values")
        ax.set_title(title, loc="left")
        figure.legend(loc="outside right upper", fontsize="small")
        return figure

    rows: list[list[Any]] = []
    for system in systems:
        hist = histograms[system]
        edges = hist["edges"]
        rows += [
            [system, edges[i], edges[i + 1], count]
            for i, count in enumerate(hist["counts"])
            if count
        ]
        for label, key in (("below range", "below"), ("above range", "above")):
            if hist.get(key):
                rows.append([system, label, label, hist[key]])
    return Figure(
        name=name,
        title=title,
        description=(
            f"Histogram of {xlabel} per system ({', '.join(systems)}), as the share of each "
            "system's values per bin; the table lists the non-empty bins."
        ),
        svg=render_svg(name, draw),
        table=DataTable(["system", "bin from", "bin to", "count"], rows),
    )
