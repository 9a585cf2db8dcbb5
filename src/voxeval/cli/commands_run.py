"""Run commands: run, report, score, suites."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from voxeval.cli.common import console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.config import load_run_config, load_yaml, resolve_config_paths
from voxeval.errors import ConfigError
from voxeval.report.document import fmt_ci, fmt_num, is_stat
from voxeval.report.writer import SUMMARY_JSON, SUMMARY_MD, write_report
from voxeval.runner.execute import open_run, rescore, run_evaluation

MAX_TABLE_METRICS = 12


def summary_table(summary: Mapping[str, Any]) -> Table:
    """Overall results per system, for the end of ``voxeval run``."""
    table = Table(title="overall (mean, 95% CI, n)")
    for column in ("system", "metric", "mean", "95% CI", "n"):
        table.add_column(column)
    for system, entry in (summary.get("systems") or {}).items():
        stats = [(m, s) for m, s in (entry.get("overall") or {}).items() if is_stat(s)]
        overall = entry.get("overall") or {}
        extra = [(k, v) for k, v in entry.items() if k not in overall and is_stat(v)]
        for metric, stat in (stats + extra)[:MAX_TABLE_METRICS]:
            table.add_row(system, metric, fmt_num(stat["mean"]), fmt_ci(stat), str(stat["n"]))
        units = entry.get("units") or {}
        if units.get("failed"):
            table.add_row(system, "[red]failed units[/]", str(units["failed"]), "", "")
        for metric, reason in (entry.get("not_run") or {}).items():
            table.add_row(system, metric, "not run", reason[:60], "0")
    return table


def _finish(run_dir: Path, report_md: Path) -> None:
    summary = json.loads((report_md.parent / SUMMARY_JSON).read_text(encoding="utf-8"))
    console.print(summary_table(summary))
    console.print(f"run folder: {run_dir}")
    typer.echo(f"report: {report_md}")


def _interrupted(run_dir: Path) -> NoReturn:
    console.print(f"[yellow]stopped.[/] Run the same command again to resume {run_dir}.")
    raise SystemExit(130)


@app.command()
@friendly_errors
def run(
    config: Path = typer.Argument(..., help="run config YAML"),
    out: Path | None = typer.Option(None, "--out", "-o", help="run folder [runs/<config stem>]"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="only the first N items"),
    seed: int | None = typer.Option(None, "--seed", help="override the config's seed"),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="worker threads"),
    trials: int | None = typer.Option(None, "--trials", min=1, help="trials per item"),
    no_resume: bool = typer.Option(
        False, "--no-resume", help="discard previous results in the run folder and start over"
    ),
) -> None:
    """Evaluate the config's systems on its suite; resumes an interrupted run."""
    overrides = {"seed": seed, "concurrency": concurrency, "trials": trials, "limit": limit}
    cfg = load_run_config(config, overrides)
    run_dir = out or Path("runs") / config.stem
    try:
        result = run_evaluation(cfg, run_dir, limit=limit, resume=not no_resume, console=console)
    except KeyboardInterrupt:
        _interrupted(run_dir)
    _finish(result, result / "report" / SUMMARY_MD)


@app.command()
@friendly_errors
def validate(config: Path = typer.Argument(..., help="run config YAML")) -> None:
    """Check a run config completely without running anything (exit 2 listing every problem)."""
    from voxeval.runner.plan_check import validate_plan

    cfg = load_run_config(config)
    suite = validate_plan(cfg)
    systems = ", ".join(f"{s.name} ({s.type})" for s in cfg.systems)
    where = f"suite {suite.name} ({suite.protocol})" if suite else f"suite {cfg.suite}"
    typer.echo(f"{config}: OK: {where}; systems: {systems}")


@app.command()
@friendly_errors
def report(run_dir: Path = typer.Argument(..., help="a run folder")) -> None:
    """Re-write report/summary.{json,md} and scores.csv from the stored scores."""
    ctx = open_run(run_dir, console)
    report_md = write_report(ctx)
    _finish(ctx.store.run_dir, report_md)


@app.command()
@friendly_errors
def score(
    run_dir: Path = typer.Argument(..., help="a run folder"),
    metrics: str | None = typer.Option(
        None, "--metrics", help="comma-separated metric names [protocol defaults]"
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="YAML whose top-level fields replace the stored config's (e.g. a new judge:)",
    ),
) -> None:
    """Score finished units again from their stored artifacts (never calls the systems)."""
    names = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    overrides = None
    if config is not None:
        overrides = load_yaml(config) or {}
        if not isinstance(overrides, dict):
            raise ConfigError(f"{config}: expected a mapping of config fields")
        overrides = resolve_config_paths(overrides, config.parent.resolve())
    try:
        result = rescore(run_dir, names, console=console, overrides=overrides)
    except KeyboardInterrupt:
        _interrupted(run_dir)
    _finish(result, result / "report" / SUMMARY_MD)


@app.command()
@friendly_errors
def suites(as_json: bool = typer.Option(False, "--json", help="machine-readable output")) -> None:
    """List built-in and registered suites with their protocol."""
    from voxeval.benchmarks.suite_info import list_suites

    rows = [
        {"name": s.name, "protocol": s.protocol, "description": s.description, "path": str(s.path)}
        for s in list_suites()
    ]
    if as_json:
        print_json(rows)
        return
    table = Table(title="suites")
    for column in ("name", "protocol", "description"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["protocol"], row["description"])
    Console().print(table)
