"""Lines of means with 95% CI whiskers over an ordered axis (conditions, turns, k): one line
per series (a system, or a system's pass@k / pass^k curve)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from voxeval.json_types import JSONReadObject
from voxeval.report.figures.series import has_mean, stat_table, whiskers
from voxeval.report.figures.style import LINE_STYLES, WIDE, colour, marker, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.report.figures.svg import Figure, new_figure, render_svg
from voxeval.report.json_fields import as_float


@dataclass(frozen=True)
class Series:
    label: str
    points: Mapping[str, JSONReadObject]  # x label -> stat
    colour_index: int
    style_index: int = 0


def stat_lines(
    name: str,
    title: str,
    series: Sequence[Series],
    xs: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
    ylim: tuple[float, float] | None = None,
) -> Figure:
    drawn = [s for s in series if any(has_mean(s.points.get(x)) for x in xs)]
    # dodge each system's whiskers sideways so they do not hide each other
    colours = sorted({s.colour_index for s in drawn})
    shift = 0.06 if len(colours) > 1 else 0.0

    def draw() -> MplFigure:
        figure = new_figure(WIDE)
        ax = figure.add_subplot()
        for line in drawn:
            present = [x for x in xs if has_mean(line.points.get(x))]
            stats = [line.points[x] for x in present]
            offset = shift * (colours.index(line.colour_index) - (len(colours) - 1) / 2)
            positions = [xs.index(x) + offset for x in present]
            means = [as_float(s["mean"]) for s in stats]
            style = LINE_STYLES[line.style_index % len(LINE_STYLES)]
            (path,) = ax.plot(
                positions, means, style, color=colour(line.colour_index), label=line.label
            )
            path.set_gid(f"{name}-line-{slug(line.label)}")
            below, above = whiskers(stats)
            for x, pos, mean, lo, hi in zip(present, positions, means, below, above, strict=True):
                bar = ax.errorbar(
                    [pos],
                    [mean],
                    yerr=[[lo], [hi]],
                    fmt=marker(line.colour_index),
                    color=colour(line.colour_index),
                    capsize=3,
                    markersize=4,
                )
                bar.lines[0].set_gid(f"{name}-point-{slug(line.label)}-{slug(x)}")
        ax.set_xticks(range(len(xs)), list(xs), rotation=30 if len(xs) > 8 else 0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(title, loc="left")
        figure.legend(loc="outside right upper", fontsize="small")
        return figure

    rows = [((s.label, x), s.points[x]) for s in drawn for x in xs if has_mean(s.points.get(x))]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Lines: mean {ylabel} by {xlabel} for {', '.join(s.label for s in drawn)}; "
            "whiskers: 95% confidence intervals."
        ),
        svg=render_svg(name, draw),
        table=stat_table(["series", xlabel], rows),
    )
