"""``voxeval compare RUN RUN...`` (paired comparison of runs of one suite) and
``voxeval leaderboard RUN... -o FILE`` (ranked table with provenance); see docs/comparisons.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from voxeval.cli.common import console, friendly_errors
from voxeval.cli.main import app
from voxeval.report.blocks import fmt_num
from voxeval.report.compare_document import marker, write_comparison
from voxeval.report.leaderboard import build_leaderboard, leaderboard_format, write_leaderboard
from voxeval.report.run_compare import RunComparison, compare_runs

RUNS_ARG = typer.Argument(..., help="run folders of the same suite (the first is the baseline)")
METRIC_OPT = typer.Option(
    None, "--metric", "-m", help="metric to include (repeat for several); default: see docs"
)


def _delta_cell(stat: dict[str, Any]) -> str:
    low, high = stat.get("ci_low"), stat.get("ci_high")
    interval = f" [{fmt_num(low)}, {fmt_num(high)}]" if low is not None else ""
    return fmt_num(stat.get("mean")) + interval


def comparison_table(comparison: RunComparison) -> tuple[Table, int]:
    """The rows whose mean delta is not zero (delta, adjusted p, flag) and how many
    compared rows were left out because nothing changed."""
    table = Table(title=f"changes against {comparison.runs[0]['run_id']}")
    for column in ("system", "metric", "run", "delta [95% CI]", "p (Holm)", "flag"):
        table.add_column(column)
    unchanged = 0
    for system, entry in comparison.systems.items():
        for metric, m in entry["metrics"].items():
            for c in m["comparisons"]:
                if not c["flag"] and not c["delta"].get("mean"):
                    unchanged += 1
                    continue
                style = {"regression": "red", "improvement": "green"}.get(c["flag"] or "")
                flag = marker(c["flag"])
                table.add_row(
                    system, metric, c["run"],
                    _delta_cell(c["delta"]) if c["paired_clusters"] else "no paired item",
                    fmt_num(c["p_holm"]), f"[{style}]{flag}[/]" if style else flag,
                )  # fmt: skip
    return table, unchanged


@app.command()
@friendly_errors
def compare(
    runs: list[Path] = RUNS_ARG,
    out: Path = typer.Option(
        Path("comparison"), "--out", "-o", help="folder for comparison.json/.md/.html"
    ),
    metric: list[str] | None = METRIC_OPT,
) -> None:
    """Compare two or more runs of the same suite: per-item deltas against the first run,
    paired tests over the independent unit, Holm-adjusted, regressions flagged."""
    comparison = compare_runs(runs, metrics=metric or None)
    for warning in comparison.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for system, reason in comparison.not_compared_systems.items():
        console.print(f"system {system}: not compared ({reason})", highlight=False)
    paths = write_comparison(comparison, out)
    table, unchanged = comparison_table(comparison)
    if table.row_count:
        console.print(table)
    console.print(f"{unchanged} compared metrics did not change on average", highlight=False)
    flags = comparison.flags()
    regressions = sum(1 for f in flags if f["flag"] == "regression")
    improvements = sum(1 for f in flags if f["flag"] == "improvement")
    console.print(f"{regressions} regressions, {improvements} improvements", highlight=False)
    for path in paths:
        typer.echo(str(path))


@app.command()
@friendly_errors
def leaderboard(
    runs: list[Path] = typer.Argument(..., help="run folders of the same suite"),
    output: Path = typer.Option(..., "--output", "-o", help="file to write (.md, .csv, .json)"),
    metric: list[str] | None = METRIC_OPT,
    fmt: str | None = typer.Option(
        None, "--format", help="md, csv or json (default: from the file's extension)"
    ),
) -> None:
    """One row per (system, run): headline metrics with 95% CIs, rank with a rank interval,
    and provenance (suite version, judge, seed, voxeval commit, run id, date)."""
    chosen = leaderboard_format(output, fmt)  # a bad extension fails before any work
    board = build_leaderboard(runs, metrics=metric or None)
    for warning in board.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    path = write_leaderboard(board, output, chosen)
    typer.echo(str(path))
