"""A radar (spider) chart: one closed polygon per system over the dimensions or categories.
Drawn only with at least three axes; the table holds the CIs a radar cannot show."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from voxeval.json_types import JSONReadObject
from voxeval.report.figures.series import has_mean, stat_table
from voxeval.report.figures.style import LINE_STYLES, SQUARE, colour, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.report.figures.svg import Figure, new_figure, render_svg
from voxeval.report.json_fields import as_float

MIN_AXES = 3


def radar(
    name: str,
    title: str,
    grouped: Mapping[str, Mapping[str, JSONReadObject]],
    axes: list[str],
    label: str,
) -> Figure:
    """``grouped``: system -> axis -> stat. A system without a mean on every axis is left
    out (a polygon needs every corner; drawing a gap as 0 would show a score it never got)."""
    partial = [s for s, stats in grouped.items() if not all(has_mean(stats.get(a)) for a in axes)]
    complete = {s: stats for s, stats in grouped.items() if s not in partial}
    angles = [2 * math.pi * i / len(axes) for i in range(len(axes))]

    def draw() -> MplFigure:
        figure = new_figure(SQUARE)
        ax = figure.add_subplot(projection="polar")
        for i, (system, stats) in enumerate(grouped.items()):
            if system in partial:
                continue  # keeps each system's colour the same as in the other figures
            values = [as_float(stats[a]["mean"]) for a in axes]
            (line,) = ax.plot(
                [*angles, angles[0]],
                [*values, values[0]],
                LINE_STYLES[i % len(LINE_STYLES)],
                color=colour(i),
                label=system,
            )
            line.set_gid(f"{name}-polygon-{slug(system)}")
            ax.fill([*angles, angles[0]], [*values, values[0]], color=colour(i), alpha=0.12)
        ax.set_xticks(angles, axes)
        ax.set_title(title, loc="left")
        ax.legend(fontsize="small", loc="upper right", bbox_to_anchor=(1.25, 1.1))
        return figure

    rows = [
        ((system, a), stats[a])
        for system, stats in grouped.items()
        for a in axes
        if has_mean(stats.get(a))
    ]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Radar of mean {label} per axis ({', '.join(axes)}), one polygon per system "
            f"({', '.join(complete)}); the 95% CIs are in the table."
            + (
                f" Not drawn (a mean missing on some axis): {', '.join(partial)}."
                if partial
                else ""
            )
        ),
        svg=render_svg(name, draw),
        table=stat_table(["system", "axis"], rows),
    )
