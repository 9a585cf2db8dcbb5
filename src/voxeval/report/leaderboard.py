"""A leaderboard over runs of one suite: one row per (system, run) with the headline metrics'
means and 95% intervals (computed as each run's summary computes them), a rank with a rank
interval, and where each number came from (suite and its version, judge, seed, voxeval
version and commit, run id and date).

Ranks are read from the intervals of the first metric (``analysis.rank_intervals``): a row's
rank is 1 + the number of rows whose interval lies wholly on the better side of its own, its
rank interval [best, worst] adds the rows it cannot be told apart from. A metric that is better
lower is ranked on its negated interval. A statistic without an interval because every value
(or every unit's mean) was equal is taken as the point it is; one without an interval because
it has a single independent unit is taken as unbounded (it could sit anywhere); a row without
a value for the rank metric is listed last, unranked.

Runs with an arena (multi-turn) add its ratings as their reports wrote them
(``report/summary.json``): per run, dimension and system the online Elo and the Bradley-Terry
rating with their intervals and rank intervals, an unbounded interval said as such, and the
systems left unrated with the reason.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval import atomic_files
from voxeval.analysis.bootstrap import NOTE_TOO_FEW_CLUSTERS
from voxeval.analysis.ratings.rank_intervals import rank_intervals
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.arena_blocks import interval_text, rank_text, rating_text
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock, fmt_mean_ci
from voxeval.report.json_fields import as_float, section
from voxeval.report.markdown import block_markdown
from voxeval.report.run_compare import direction_of
from voxeval.report.run_source import RunSource, check_same_suite, open_run_source
from voxeval.report.unit_plural import unit_plural
from voxeval.store.records import ScoreRow

HEADLINE = {"single_turn": "checklist", "live_call": "task_completion", "multi_turn": "rubric"}
FORMATS = {".md": "md", ".markdown": "md", ".csv": "csv", ".json": "json"}
STAT_FIELDS = ("mean", "ci_low", "ci_high", "n", "clusters")
PROVENANCE_FIELDS = (
    "suite", "suite_version", "protocol", "judge", "audio_judge", "seed", "voxeval_version",
    "commit", "date",
)  # fmt: skip


@dataclass(frozen=True)
class Leaderboard:
    suite: dict[str, Any]
    metrics: list[str]
    better: dict[str, str | None]
    rows: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    arena: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "metrics": self.metrics,
            "better": self.better,
            "rank_metric": self.metrics[0] if self.metrics else None,
            "ranking": "rank = 1 + rows whose 95% interval of the rank metric is wholly "
            "better; [rank_best, rank_worst] = the ranks its interval allows",
            "warnings": self.warnings,
            "rows": self.rows,
            "arena": self.arena,
        }


ARENA_FIELDS = ("rating", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "unbounded")


def arena_rows(run: RunSource) -> list[dict[str, Any]]:
    """The arena ratings the run's report wrote: one row per dimension and system."""
    summary = run.reader.summary()
    arena = summary.section("arena") if summary is not None else None
    if arena is None:
        return []
    rows = []
    for dimension, block in (arena.get("dimensions") or {}).items():
        bt = (block.get("bt") or {}).get("systems") or {}
        elo = (block.get("elo_intervals") or {}).get("systems") or {}
        for system in dict.fromkeys([*bt, *elo]):
            b, e = bt.get(system) or {}, elo.get(system) or {}
            rows.append(
                {
                    "run_id": run.run_id,
                    "dimension": dimension,
                    "system": system,
                    "battles": b.get("battles", e.get("battles")),
                    "bt": {k: b.get(k) for k in ARENA_FIELDS} if b else None,
                    "elo": {k: e.get(k) for k in ARENA_FIELDS} if e else None,
                    "unrated": None,
                }
            )
        for system, reason in (block.get("unrated") or {}).items():
            rows.append(
                {"run_id": run.run_id, "dimension": dimension, "system": system,
                 "battles": 0, "bt": None, "elo": None, "unrated": reason}
            )  # fmt: skip
    return rows


def _headline(
    runs: Sequence[RunSource], rows_by_run: Mapping[str, Sequence[ScoreRow]]
) -> list[str]:
    with_values = {r.metric for run in runs for r in rows_by_run[run.run_id] if r.ran}
    preferred = HEADLINE.get(runs[0].protocol)
    if preferred is not None and preferred in with_values:
        return [preferred]
    directed = sorted(m for m in with_values if direction_of(m) is not None)
    if not directed:
        raise ConfigError(
            "leaderboard: no metric with a better direction has a value; use --metric"
        )
    return [directed[0]]


def _rank_interval(stat: JSONReadObject | None, better: str) -> tuple[float, float] | None:
    if not stat or stat.get("mean") is None:
        return None
    low, high = stat.get("ci_low"), stat.get("ci_high")
    if low is None or high is None:
        if stat.get("ci_note") == NOTE_TOO_FEW_CLUSTERS:
            return (-math.inf, math.inf)
        low = high = stat["mean"]
    lower, upper = as_float(low), as_float(high)
    return (lower, upper) if better == "higher" else (-upper, -lower)


def _stat_fields(stat: JSONReadObject | None) -> dict[str, JSONReadValue]:
    stat = stat or {}
    out = {key: stat.get(key) for key in STAT_FIELDS}
    if stat.get("ci_note"):
        out["ci_note"] = stat["ci_note"]
    out["method"] = stat.get("method")
    return out


def build_leaderboard(
    run_dirs: Sequence[Path | str], *, metrics: Sequence[str] | None = None
) -> Leaderboard:
    """The leaderboard of the runs in ``run_dirs`` (same suite; differences in suite
    version, seed or judge are warnings). ``metrics``: the headline metrics, the first
    ranks (default: the protocol's headline metric)."""
    if not run_dirs:
        raise ConfigError("leaderboard: give at least one run folder")
    runs = [open_run_source(p) for p in run_dirs]
    warnings = check_same_suite(runs)
    rows_by_run = {run.run_id: run.rows() for run in runs}
    arena = [row for run in runs for row in arena_rows(run)]
    try:
        wanted = list(dict.fromkeys(metrics)) if metrics else _headline(runs, rows_by_run)
    except ConfigError:
        if not arena:
            raise
        # an arena-only run (e.g. released replies without rubrics): its ratings are the board
        first = runs[0]
        suite = {"name": first.suite.name, "protocol": first.protocol, "unit": first.cluster_unit}
        warnings.append("no metric with a better direction has a value: arena ratings only")
        return Leaderboard(suite=suite, metrics=[], better={}, rows=[], warnings=warnings,
                           arena=arena)  # fmt: skip
    better = {m: direction_of(m) for m in wanted}
    rank_metric = wanted[0]
    rank_better = better[rank_metric]
    if rank_better is None:
        raise ConfigError(
            f"--metric {rank_metric}: a descriptive metric (no better direction) cannot rank; "
            "name a ranked metric first"
        )
    rows: list[dict[str, Any]] = []
    for run in runs:
        overall = run.overall(wanted, rows_by_run[run.run_id])
        for system in run.systems():
            stats = overall.get(system, {})
            rows.append(
                {
                    "rank": None,
                    "rank_best": None,
                    "rank_worst": None,
                    "system": system,
                    "run_id": run.run_id,
                    "metrics": {m: _stat_fields(stats.get(m)) for m in wanted},
                    **{k: v for k, v in run.provenance().items() if k != "run_id"},
                }
            )
    intervals = {
        i: iv
        for i, row in enumerate(rows)
        if (iv := _rank_interval(row["metrics"][rank_metric], rank_better)) is not None
    }
    for i, ranked in rank_intervals({str(i): iv for i, iv in intervals.items()}).items():
        row = rows[int(i)]
        row["rank"], row["rank_best"], row["rank_worst"] = ranked.rank, ranked.best, ranked.worst

    def order(indexed: tuple[int, dict[str, Any]]) -> tuple[Any, ...]:
        i, row = indexed
        mean = row["metrics"][rank_metric]["mean"]
        signed = -mean if mean is not None and rank_better == "higher" else mean
        return (row["rank"] is None, row["rank"] or 0, signed is None, signed or 0.0, i)

    ordered = [row for _, row in sorted(enumerate(rows), key=order)]
    first = runs[0]
    return Leaderboard(
        suite={"name": first.suite.name, "protocol": first.protocol, "unit": first.cluster_unit},
        metrics=wanted,
        better=better,
        rows=ordered,
        warnings=warnings,
        arena=arena,
    )


def leaderboard_format(path: Path, fmt: str | None) -> str:
    """``md``/``csv``/``json`` from ``fmt`` or else from the file's extension."""
    if fmt:
        if fmt not in ("md", "csv", "json"):
            raise ConfigError(f"--format: expected md, csv or json, not {fmt!r}")
        return fmt
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise ConfigError(
            f"{path}: cannot tell the format from the extension {path.suffix!r}; "
            "use .md, .csv or .json, or --format"
        )
    return found


def _num(value: JSONReadValue) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def render_csv(board: Leaderboard) -> str:
    stat_columns = [f"{m}_{key}" for m in board.metrics for key in STAT_FIELDS]
    header = ["rank", "rank_best", "rank_worst", "system", "run_id", *stat_columns,
              *PROVENANCE_FIELDS]  # fmt: skip
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in board.rows:
        stats = [_num(row["metrics"][m].get(key)) for m in board.metrics for key in STAT_FIELDS]
        writer.writerow(
            [_num(row["rank"]), _num(row["rank_best"]), _num(row["rank_worst"]), row["system"],
             row["run_id"], *stats, *(_num(row.get(k)) for k in PROVENANCE_FIELDS)]
        )  # fmt: skip
    return buffer.getvalue()


def render_json(board: Leaderboard) -> str:
    return json.dumps(board.to_dict(), indent=2, allow_nan=False) + "\n"


def _rank_cell(row: JSONReadObject) -> tuple[str, str]:
    if row["rank"] is None:
        return "–", "unranked (no value)"
    return str(row["rank"]), f"{row['rank_best']}–{row['rank_worst']}"


def render_markdown(board: Leaderboard) -> str:
    unit = board.suite.get("unit") or "item"
    header = ["rank", "rank interval", "system", "run"]
    header += [f"{m} ({board.better[m] or 'descriptive'}) mean [95% CI]" for m in board.metrics]
    header += ["n", "suite version", "judge", "seed", "voxeval", "commit", "date"]
    rows = []
    for row in board.rows:
        first = row["metrics"][board.metrics[0]]
        n = f"{first.get('n') or 0} ({first.get('clusters') or 0} {unit_plural(unit)})"
        rows.append(
            [*_rank_cell(row), row["system"], row["run_id"],
             *(fmt_mean_ci(row["metrics"][m]) for m in board.metrics), n,
             str(row.get("suite_version") or "–"), str(row.get("judge") or "none"),
             str(row.get("seed")), str(row.get("voxeval_version") or "–"),
             str(row.get("commit") or "–"), str(row.get("date") or "–")]
        )  # fmt: skip
    blocks: list[Block] = [
        Heading(1, f"Leaderboard: {board.suite['name']} ({board.suite['protocol']})")
    ]
    if board.metrics:
        blocks += [
            Paragraph(
                f"Ranked by {board.metrics[0]} ({board.better[board.metrics[0]]} is better). "
                "A rank is 1 + the rows whose 95% interval is wholly better; the rank interval "
                f"is every rank the interval allows. Intervals resample the {unit}."
            ),
            TableBlock(header, rows),
        ]
    if board.arena:
        blocks += arena_markdown_blocks(board.arena)
    if board.warnings:
        blocks.append(BulletList([f"Warning: {w}" for w in board.warnings]))
    lines: list[str] = []
    for block in blocks:
        lines += block_markdown(block)
    return "\n".join(lines).rstrip() + "\n"


def arena_markdown_blocks(arena: Sequence[JSONReadObject]) -> list[Block]:
    header = ["run", "dimension", "system", "Elo", "Elo 95% CI", "Elo rank (interval)",
              "Bradley-Terry", "BT 95% CI", "BT rank (interval)", "battles"]  # fmt: skip
    rows = []
    for row in arena:
        if row["unrated"]:
            rows.append([str(row["run_id"]), str(row["dimension"]), str(row["system"]),
                         "unrated", "–", "–", f"unrated: {row['unrated']}", "–", "–",
                         "0"])  # fmt: skip
            continue
        elo, bt = section(row["elo"]), section(row["bt"])
        bt_rating = rating_text(bt.get("rating"))
        rows.append(
            [str(row["run_id"]), str(row["dimension"]), str(row["system"]),
             rating_text(elo.get("rating")),
             interval_text(elo), rank_text(elo),
             f"{bt_rating} (ridge-bound)" if bt.get("unbounded") else bt_rating,
             interval_text(bt), rank_text(bt), str(row.get("battles"))]
        )  # fmt: skip
    return [
        Heading(2, "Arena ratings"),
        Paragraph(
            "As each run's report wrote them: online Elo (judging order) and Bradley-Terry "
            "with 95% intervals over dialogues and rank intervals, per dimension. Unbounded: "
            "the system won or lost every battle (or the battles do not link every system), so "
            "no interval bounds it and its rank is uncertain."
        ),
        TableBlock(header, rows),
    ]


RENDERERS = {"md": render_markdown, "csv": render_csv, "json": render_json}


def write_leaderboard(board: Leaderboard, path: Path | str, fmt: str | None = None) -> Path:
    path = Path(path)
    text = RENDERERS[leaderboard_format(path, fmt)](board)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_files.write_text_atomic(path, text)
    return path
