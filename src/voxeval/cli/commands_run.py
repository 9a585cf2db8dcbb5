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
from voxeval.report.document import cluster_noun, is_stat, metric_label, stat_cells
from voxeval.report.headline_metrics import headline_first
from voxeval.report.writer import SUMMARY_JSON, SUMMARY_MD, write_report
from voxeval.runner.execute import open_run, rescore_run, run_evaluation
from voxeval.runner.faults import DEFAULT_RETRY, RetryPolicy
from voxeval.runner.health import RunHealth, run_health
from voxeval.runner.plan_check import plan_notes
from voxeval.store import RunStore

MAX_TABLE_METRICS = 12
MAX_FAILURES_OPTION = typer.Option(
    0,
    "--max-failures",
    min=0,
    help="units that are failures of the systems under test tolerated before exit code 1",
)


def summary_table(summary: Mapping[str, Any]) -> Table:
    """Overall results per system, for the end of ``voxeval run``."""
    table = Table(title="overall (mean, 95% CI, n)")
    for column in ("system", "metric", "mean", "95% CI", "n"):
        table.add_column(column)
    protocol = (summary.get("suite") or {}).get("protocol")
    for system, entry in (summary.get("systems") or {}).items():
        overall = entry.get("overall") or {}
        stats = {m: s for m, s in overall.items() if is_stat(s)}
        stats.update({k: v for k, v in entry.items() if k not in overall and is_stat(v)})
        unit = cluster_noun(entry)
        # The protocol's headline metrics first: the table cannot show every metric.
        shown = headline_first(protocol, stats)
        for metric in shown[:MAX_TABLE_METRICS]:
            stat = stats[metric]
            table.add_row(system, metric_label(metric, stat), *stat_cells(stat, unit))
        if len(shown) > MAX_TABLE_METRICS:
            hidden = len(shown) - MAX_TABLE_METRICS
            table.add_row(system, f"({hidden} more metrics in report/summary.md)", "", "", "")
        units = entry.get("units") or {}
        if units.get("failed"):
            causes = _by_cause(units.get("failed_by_cause") or {})
            table.add_row(
                system, "[red]failed units (excluded)[/]", str(units["failed"]), causes, ""
            )
        if units.get("pending_metrics"):
            table.add_row(system, "[red]pending scores[/]", str(units["pending_metrics"]), "", "")
        faults = units.get("system_faults") or {}
        if faults:
            table.add_row(
                system, "[yellow]system faults (scored as failures)[/]", str(sum(faults.values())),
                _by_cause(faults), "",
            )  # fmt: skip
        for metric, reason in (entry.get("not_run") or {}).items():
            table.add_row(system, metric, "not run", reason[:60], "0")
    return table


def _by_cause(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{cause} {n}" for cause, n in sorted(counts.items()))


def print_health(health: RunHealth, max_failures: int) -> None:
    """The failed units per cause, pending scores and system faults, on stderr."""
    for cause, units in sorted(health.failed.items()):
        console.print(f"[red]failed ({cause}):[/] {len(units)} units, excluded from the scores")
        for unit in units[:5]:
            console.print(f"  {unit.key}: {unit.error or ''}"[:300], highlight=False, markup=False)
        if len(units) > 5:
            console.print(f"  ... and {len(units) - 5} more")
    if health.pending_scores:
        console.print(
            f"[red]pending:[/] {health.pending_scores} scores could not be computed (judge or "
            "scoring service down); run again or `voxeval score` to retry them"
        )
    for step, not_done in sorted(health.comparisons_not_done.items()):
        console.print(
            f"[red]comparisons not done ({step}):[/] {_by_cause(not_done)}; run again or "
            "`voxeval score` to complete them"
        )
    if health.system_faults:
        over = health.system_fault_units > max_failures
        console.print(
            f"[{'red' if over else 'yellow'}]system faults:[/] {health.system_fault_units} units "
            f"scored as failures of the system under test ({_by_cause(health.system_faults)}); "
            f"--max-failures {max_failures}"
        )


def _finish(
    run_dir: Path, report_md: Path, max_failures: int = 0, *, incomplete: bool = False
) -> None:
    """Print the results and exit 1 when the run is ``incomplete``, has failed units or
    pending scores, or has more system faults than ``max_failures``."""
    summary = json.loads((report_md.parent / SUMMARY_JSON).read_text(encoding="utf-8"))
    console.print(summary_table(summary))
    store = RunStore(run_dir)
    try:
        health = run_health(store)
    finally:
        store.close()
    print_health(health, max_failures)
    console.print(f"run folder: {run_dir}")
    typer.echo(f"report: {report_md}")
    code = max(health.exit_code(max_failures), int(incomplete))
    if code:
        raise SystemExit(code)


def _interrupted(run_dir: Path) -> NoReturn:
    console.print(f"[yellow]stopped.[/] Run the same command again to resume {run_dir}.")
    raise SystemExit(130)


@app.command()
@friendly_errors
def run(
    config: Path = typer.Argument(..., help="run config YAML"),
    out: Path | None = typer.Option(None, "--out", "-o", help="run folder [`runs/<config stem>`]"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="only the first N items"),
    seed: int | None = typer.Option(None, "--seed", help="override the config's seed"),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, help="units talking to their systems at once [config]"
    ),
    trials: int | None = typer.Option(None, "--trials", min=1, help="trials per item"),
    no_resume: bool = typer.Option(
        False, "--no-resume", help="discard previous results in the run folder and start over"
    ),
    max_failures: int = MAX_FAILURES_OPTION,
    retries: int = typer.Option(
        DEFAULT_RETRY.attempts - 1,
        "--retries",
        min=0,
        help="retries of a unit that fails on voxeval's side (simulator, renderer, ...)",
    ),
    retry_backoff: float = typer.Option(
        DEFAULT_RETRY.backoff_s,
        "--retry-backoff",
        min=0.0,
        help="seconds before the first retry (doubling after each)",
    ),
    executor: str | None = typer.Option(
        None,
        "--executor",
        help="local (this process), processes (worker processes of this machine) or ray "
        "(a Ray cluster) [config: local]",
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="worker processes (processes) or actors (ray) [config processes.workers / "
        "ray.workers; none: one per CPU]",
    ),
    address: str | None = typer.Option(
        None, "--address", help="Ray cluster to join [config ray.address; none: start one here]"
    ),
) -> None:
    """Evaluate the config's systems on its suite; resumes an interrupted run.

    Exit code 0: every unit ran and was scored (and compared); 1: units failed on voxeval's
    side, scores or comparisons are pending, failed or not run, or more than --max-failures
    units are failures of the systems under test; 2: a mistake in the config or input; 130:
    interrupted."""
    overrides = {
        "seed": seed,
        "concurrency": concurrency,
        "trials": trials,
        "limit": limit,
        "executor": executor,
    }
    cfg = load_run_config(config, overrides)
    if workers is not None:
        if cfg.executor == "local":
            raise ConfigError(f"{config}: --workers is for --executor processes or --executor ray")
        section = cfg.processes if cfg.executor == "processes" else cfg.ray
        cfg = cfg.model_copy(update={cfg.executor: section.model_copy(update={"workers": workers})})
    if address is not None:
        if cfg.executor != "ray":
            raise ConfigError(f"{config}: --address is for the Ray executor; add --executor ray")
        cfg = cfg.model_copy(update={"ray": cfg.ray.model_copy(update={"address": address})})
    for note in plan_notes(cfg):  # e.g. a multi-turn run without a judge
        console.print(f"{config}: note: {note}", highlight=False, markup=False, soft_wrap=True)
    run_dir = out or Path("runs") / config.stem
    retry = RetryPolicy(
        attempts=retries + 1,
        backoff_s=retry_backoff,
        max_backoff_s=max(retry_backoff, DEFAULT_RETRY.max_backoff_s),
    )
    try:
        result = run_evaluation(
            cfg, run_dir, limit=limit, resume=not no_resume, console=console, retry=retry
        )
    except KeyboardInterrupt:
        _interrupted(run_dir)
    _finish(result, result / "report" / SUMMARY_MD, max_failures)


@app.command()
@friendly_errors
def validate(config: Path = typer.Argument(..., help="run config YAML")) -> None:
    """Check a run config completely without running anything (exit 2 listing every problem)."""
    from voxeval.runner.plan_check import validate_plan

    cfg = load_run_config(config)
    suite = validate_plan(cfg)
    for note in plan_notes(cfg):
        typer.echo(f"{config}: note: {note}")
    systems = ", ".join(f"{s.name} ({s.type})" for s in cfg.systems)
    where = f"suite {suite.name} ({suite.protocol})" if suite else f"suite {cfg.suite}"
    typer.echo(f"{config}: OK: {where}; systems: {systems}")


@app.command()
@friendly_errors
def report(
    run_dir: Path = typer.Argument(..., help="a run folder"),
    max_failures: int = MAX_FAILURES_OPTION,
) -> None:
    """Re-write report/summary.{json,md} and scores.csv from the stored scores (exit codes
    as for run)."""
    ctx = open_run(run_dir, console)
    report_md = write_report(ctx)
    _finish(ctx.store.run_dir, report_md, max_failures)


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
    max_failures: int = MAX_FAILURES_OPTION,
) -> None:
    """Score finished units again from their stored artifacts (never calls the systems);
    pending scores are retried. Exit codes as for run."""
    names = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    overrides = None
    if config is not None:
        overrides = load_yaml(config) or {}
        if not isinstance(overrides, dict):
            raise ConfigError(f"{config}: expected a mapping of config fields")
        overrides = resolve_config_paths(overrides, config.parent.resolve())
    try:
        result, outcome = rescore_run(run_dir, names, console=console, overrides=overrides)
    except KeyboardInterrupt:
        _interrupted(run_dir)
    # stored values kept because the re-score could not reproduce them (e.g. the judge is
    # down) or units whose scoring raised: the requested scoring did not happen
    incomplete = bool(outcome.kept or outcome.failed)
    _finish(result, result / "report" / SUMMARY_MD, max_failures, incomplete=incomplete)


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


@app.command("human-scores")
@friendly_errors
def human_scores(
    run_dir: Path = typer.Argument(..., help="a run folder"),
    ratings: Path = typer.Argument(..., help="human 1-10 ratings (.csv or .jsonl)"),
) -> None:
    """Correlate human 1-10 ratings (item_id, score[, system]) with the judge's checklist
    scores: Pearson and Spearman with cluster-bootstrap CIs over queries, overall and per
    category; written to report/human_scores.json."""
    from voxeval import atomic_files
    from voxeval.report.human_scores import human_validation, read_human_scores

    ctx = open_run(run_dir, console)
    parsed = read_human_scores(ratings)
    known = ctx.require_protocol().item_attributes(ctx)
    query_ids = {item: str(attrs.get("query_id", item)) for item, attrs in known.items()}
    result = human_validation(ratings, parsed, ctx.store.scores.load(), query_ids, seed=ctx.seed)
    out = ctx.store.report_dir / "human_scores.json"
    atomic_files.write_text_atomic(out, json.dumps(result, indent=2, allow_nan=False) + "\n")
    table = Table("group", "n", "queries", "Pearson r [95% CI]", "Spearman rho [95% CI]")
    groups = {"overall": result["overall"], **result.get("by_category", {})}
    for group, stat in groups.items():
        cells = []
        for kind in ("pearson", "spearman"):
            c = stat[kind]
            ci = "–" if c["ci_low"] is None else f"[{c['ci_low']:.3f}, {c['ci_high']:.3f}]"
            cells.append("–" if c["r"] is None else f"{c['r']:.3f} {ci}")
        table.add_row(group, str(stat["n"]), str(stat["clusters"]), *cells)
    console.print(table)
    for group, stat in groups.items():
        if stat.get("note"):
            console.print(f"{group}: {stat['note']}", highlight=False)
    typer.echo(f"wrote {out}")
