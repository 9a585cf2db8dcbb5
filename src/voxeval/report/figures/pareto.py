"""EVA-A (accuracy) against EVA-X (experience) pass@1 per system, with CI whiskers on both
axes and the Pareto front: the systems no other system beats on both at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from voxeval.json_types import JSONReadObject
from voxeval.report.figures.series import stat_cells
from voxeval.report.figures.style import SQUARE, colour, marker, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.report.figures.svg import DataTable, Figure, new_figure, render_svg
from voxeval.report.json_fields import as_float

Point = tuple[JSONReadObject, JSONReadObject]  # (EVA-A stat, EVA-X stat)


def pareto_front(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """The systems whose (x, y) no other point matches or beats on both with one strictly
    better, sorted by x."""
    front = [
        name
        for name, (x, y) in points.items()
        if not any(
            (ox >= x and oy >= y) and (ox > x or oy > y)
            for other, (ox, oy) in points.items()
            if other != name
        )
    ]
    return sorted(front, key=lambda n: (points[n][0], -points[n][1]))


def _err(stat: JSONReadObject) -> list[list[float]]:
    mean, low, high = as_float(stat["mean"]), stat.get("ci_low"), stat.get("ci_high")
    below = mean - as_float(low) if low is not None else 0.0
    return [[below], [as_float(high) - mean if high is not None else 0.0]]


def eva_scatter(name: str, title: str, points: Mapping[str, Point], condition: str) -> Figure:
    means = {s: (as_float(a["mean"]), as_float(x["mean"])) for s, (a, x) in points.items()}
    front = pareto_front(means)

    def draw() -> MplFigure:
        figure = new_figure(SQUARE)
        ax = figure.add_subplot()
        for i, (system, (a, x)) in enumerate(points.items()):
            bar = ax.errorbar(
                [means[system][0]],
                [means[system][1]],
                xerr=_err(a),
                yerr=_err(x),
                fmt=marker(i),
                color=colour(i),
                capsize=3,
                label=system,
            )
            bar.lines[0].set_gid(f"{name}-point-{slug(system)}")
        (line,) = ax.plot(
            [means[s][0] for s in front],
            [means[s][1] for s in front],
            color="#555555",
            linestyle=":",
            label="Pareto front",
        )
        line.set_gid(f"{name}-front")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("EVA-A pass@1 (accuracy)")
        ax.set_ylabel("EVA-X pass@1 (experience)")
        ax.set_title(title, loc="left")
        ax.legend(fontsize="small")
        return figure

    rows = [
        [system, *stat_cells(a), *stat_cells(x), "yes" if system in front else "no"]
        for system, (a, x) in points.items()
    ]
    header = ["system", "EVA-A pass@1", "EVA-A CI low", "EVA-A CI high", "EVA-A n"]
    header += ["EVA-X pass@1", "EVA-X CI low", "EVA-X CI high", "EVA-X n", "on Pareto front"]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Scatter of EVA-A against EVA-X pass@1 ({condition}) for {', '.join(points)}, "
            f"whiskers: 95% CIs on both axes; dotted line: the Pareto front ({', '.join(front)})."
        ),
        svg=render_svg(name, draw),
        table=DataTable(header, rows),
    )
