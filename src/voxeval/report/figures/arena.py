"""The arena figures of one dimension: the head-to-head win-rate heatmap and the
Bradley-Terry forest plot (rating with its interval, labelled with the rank interval)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from voxeval.report.figures.style import HEATMAP, SQUARE, WIDE, colour, slug

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

from voxeval.json_types import JSONReadObject
from voxeval.report.figures.series import table_cell
from voxeval.report.figures.svg import DataTable, Figure, new_figure, render_svg
from voxeval.report.json_fields import as_float, section, sections


def win_rate_heatmap(name: str, title: str, matrix: Mapping[str, JSONReadObject]) -> Figure:
    """``matrix[x][y]``: x's record against y (``win_rate`` counts ties as half)."""
    systems = sorted({s for s in matrix} | {o for row in matrix.values() for o in row})

    def draw() -> MplFigure:
        from matplotlib import colormaps
        from matplotlib.colors import Normalize
        from matplotlib.patches import Rectangle

        cmap, norm = colormaps[HEATMAP], Normalize(0.0, 1.0)
        figure = new_figure(SQUARE)
        ax = figure.add_subplot()
        ax.grid(False)
        for r, row_system in enumerate(systems):
            for c, col_system in enumerate(systems):
                record = section(matrix.get(row_system) or {}).get(col_system)
                if not isinstance(record, Mapping):
                    continue  # never met (or the diagonal)
                rate = as_float(record["win_rate"])
                cell = Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=cmap(norm(rate)))
                cell.set_gid(f"{name}-cell-{slug(row_system)}-{slug(col_system)}")
                ax.add_patch(cell)
                ink = "white" if rate < 0.5 else "black"  # cividis is dark at low values
                ax.text(
                    c,
                    r,
                    f"{rate:.2f}\nn={record['n']}",
                    ha="center",
                    va="center",
                    color=ink,
                    fontsize="small",
                )
        ax.set_xlim(-0.5, len(systems) - 0.5)
        ax.set_ylim(len(systems) - 0.5, -0.5)
        ax.set_xticks(range(len(systems)), systems, rotation=30 if len(systems) > 3 else 0)
        ax.set_yticks(range(len(systems)), systems)
        ax.set_xlabel("opponent")
        ax.set_ylabel("system (row wins against column)")
        ax.set_title(title, loc="left")
        from matplotlib.cm import ScalarMappable

        figure.colorbar(ScalarMappable(norm, cmap), ax=ax, label="win rate (ties count half)")
        return figure

    rows = [
        [a, b, *(table_cell(r[key]) for key in ("win_rate", "wins", "ties", "losses", "n"))]
        for a in systems
        for b, r in sorted(sections(matrix.get(a) or {}), key=lambda pair: pair[0])
    ]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Heatmap of the win rate of each row system against each column system "
            f"({', '.join(systems)}); blank cells: the pair never met."
        ),
        svg=render_svg(name, draw),
        table=DataTable(["system", "opponent", "win rate", "wins", "ties", "losses", "n"], rows),
    )


def rank_text(rating: JSONReadObject) -> str:
    if rating.get("unbounded"):
        return "unbounded"
    rank, low, high = rating.get("rank"), rating.get("rank_low"), rating.get("rank_high")
    if rank is None:
        return "no rank interval"
    if low is None or high is None:
        return f"rank {rank}"
    return f"rank {rank} ({low}-{high})" if low != high else f"rank {rank}"


def bt_forest(name: str, title: str, bt: JSONReadObject) -> Figure:
    """``bt``: the Bradley-Terry report (``systems`` -> rating, interval, rank interval)."""
    ratings = dict(sections(bt.get("systems")))
    order = sorted(ratings, key=lambda s: -as_float(ratings[s]["rating"]))

    def draw() -> MplFigure:
        figure = new_figure((WIDE[0], 0.9 + 0.45 * len(order)))
        ax = figure.add_subplot()
        for y, system in enumerate(order):
            r = ratings[system]
            mean, low, high = as_float(r["rating"]), r.get("ci_low"), r.get("ci_high")
            xerr = [
                [mean - as_float(low) if low is not None else 0.0],
                [as_float(high) - mean if high is not None else 0.0],
            ]
            if r.get("unbounded"):
                # no interval: an open marker and an arrow to the side the data cannot bound
                point = ax.plot([mean], [y], marker="o", fillstyle="none", color=colour(1))[0]
                point.set_gid(f"{name}-point-{slug(system)}")
                side = -1.0 if str(r["unbounded"]).startswith("lost") else 1.0
                ax.annotate(
                    "unbounded",
                    xy=(mean, y),
                    xytext=(side * 40, 0),
                    textcoords="offset points",
                    ha="left" if side > 0 else "right",
                    va="center",
                    fontsize="small",
                    arrowprops={"arrowstyle": "<-", "color": colour(1)},
                )
                continue
            bar = ax.errorbar([mean], [y], xerr=xerr, fmt="o", color=colour(0), capsize=3)
            bar.lines[0].set_gid(f"{name}-point-{slug(system)}")
        ax.set_yticks(range(len(order)), [f"{s}  [{rank_text(ratings[s])}]" for s in order])
        ax.set_ylim(len(order) - 0.5, -0.5)
        anchor = bt.get("anchor")
        centre = f"{anchor} = 1000" if anchor else "centred on 1000"
        ax.set_xlabel(f"Bradley-Terry rating (Elo scale, {centre})")
        ax.set_title(title, loc="left")
        return figure

    rows = [
        [
            s,
            *(
                table_cell(ratings[s].get(key))
                for key in ("rating", "ci_low", "ci_high", "rank", "rank_low", "rank_high")
            ),
            table_cell(ratings[s].get("battles")),
            table_cell(ratings[s].get("unbounded") or "no"),
        ]
        for s in order
    ]
    header = ["system", "rating", "CI low", "CI high", "rank", "rank low", "rank high",
              "battles", "unbounded"]  # fmt: skip
    unbounded = [s for s in order if ratings[s].get("unbounded")]
    return Figure(
        name=name,
        title=title,
        description=(
            f"Forest plot of Bradley-Terry ratings with their intervals, best first "
            f"({', '.join(order)}); each label gives the rank and its interval"
            + (f"; no interval: {bt['ci_note']}" if bt.get("ci_note") else "")
            + (
                f"; unbounded (open marker, arrow; the rating is set by the fit's ridge): "
                f"{', '.join(unbounded)}."
                if unbounded
                else "."
            )
        ),
        svg=render_svg(name, draw),
        table=DataTable(header, rows),
    )
