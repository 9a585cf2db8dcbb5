"""Grouped bars with 95% CI whiskers: one bar per system in each group (category, condition)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from voxeval.json_types import JSONReadObject
from voxeval.report.figures.series import has_mean, stat_table, whiskers
from voxeval.report.figures.style import WIDE, colour, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.report.figures.svg import Figure, new_figure, render_svg
from voxeval.report.json_fields import as_float

Grouped = Mapping[str, Mapping[str, JSONReadObject]]
"""system -> group -> stat."""


def grouped_bars(name: str, title: str, grouped: Grouped, groups: list[str], ylabel: str) -> Figure:
    systems = [s for s in grouped if any(has_mean(grouped[s].get(g)) for g in groups)]
    width = 0.8 / max(1, len(systems))

    def draw() -> MplFigure:
        figure = new_figure(WIDE)
        ax = figure.add_subplot()
        for i, system in enumerate(systems):
            present = [g for g in groups if has_mean(grouped[system].get(g))]
            stats = [grouped[system][g] for g in present]
            xs = [groups.index(g) - 0.4 + width * (i + 0.5) for g in present]
            bars = ax.bar(
                xs,
                [as_float(s["mean"]) for s in stats],
                width,
                yerr=whiskers(stats),
                capsize=3,
                color=colour(i),
                label=system,
                ecolor="#333333",
            )
            for group, bar in zip(present, bars.patches, strict=True):
                bar.set_gid(f"{name}-bar-{slug(system)}-{slug(group)}")
        ax.set_xticks(range(len(groups)), groups, rotation=30 if len(groups) > 4 else 0)
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        figure.legend(loc="outside right upper", fontsize="small")
        return figure

    rows = [
        ((system, group), grouped[system][group])
        for system in systems
        for group in groups
        if has_mean(grouped[system].get(group))
    ]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Bars: mean {ylabel} of {', '.join(systems)} per group ({', '.join(groups)}); "
            "whiskers: 95% confidence intervals."
        ),
        svg=render_svg(name, draw),
        table=stat_table(["system", "group"], rows),
    )
