"""``voxeval ratings FILE``: Elo, Bradley-Terry and style-controlled ratings, with bootstrap
intervals and rank intervals, of any battles file (CSV or JSONL; see docs/arena-ratings.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from voxeval.analysis.ratings.battle_files import load_battles, rate_battles
from voxeval.analysis.ratings.bradley_terry import DEFAULT_RATING_CONFIDENCE
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.atomic_files import write_json_atomic
from voxeval.cli.common import RedactingConsole, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.report.arena_blocks import dimension_blocks
from voxeval.report.blocks import Block, Heading, TableBlock
from voxeval.report.markdown import block_markdown

stdout = RedactingConsole()


def _style_blocks(summary: dict[str, Any]) -> list[Block]:
    style = summary.get("style_controlled") or {}
    rows = [
        [name, f"{c['coefficient']:.3f}", f"{c['rating_points']:.1f}",
         "–" if c["ci_low"] is None else f"[{c['ci_low']:.3f}, {c['ci_high']:.3f}]"]
        for name, c in (style.get("coefficients") or {}).items()
    ]  # fmt: skip
    rows += [
        [name, "left out", "–", why] for name, why in (style.get("features_dropped") or {}).items()
    ]
    if not rows:
        return []
    header = ["style feature", "coefficient (log-odds per SD)", "rating points", "95% CI"]
    return [Heading(4, "Style coefficients"), TableBlock(header, rows)]


@app.command("ratings")
@friendly_errors
def ratings(
    battles: Path = typer.Argument(..., help="battles file, .csv or .jsonl"),
    anchor: str | None = typer.Option(
        None, "--anchor", help="system whose Bradley-Terry rating is pinned at 1000"
    ),
    resamples: int = typer.Option(
        DEFAULT_RATING_RESAMPLES, "--resamples", min=0, help="bootstrap rounds over items"
    ),
    seed: int = typer.Option(0, "--seed", help="seed of the bootstrap"),
    confidence: float = typer.Option(
        DEFAULT_RATING_CONFIDENCE, "--confidence", min=0.5, max=0.999, help="interval level"
    ),
    elo_point: str = typer.Option(
        "final",
        "--elo-point",
        help="Elo rating shown: final (online Elo in judging order) or median (FastChat's "
        "median of the bootstrap)",
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="also write the JSON here"),
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables"),
) -> None:
    """Rate the systems of a battles file (model_a, model_b, winner; optional item, order,
    dimension and style features): online Elo and Bradley-Terry with bootstrap intervals
    over items and rank intervals, style-controlled ratings and the win matrix, per
    dimension. A system that won or lost every battle is reported as unbounded."""
    if elo_point not in ("final", "median"):
        raise ConfigError(f"--elo-point: expected final or median, not {elo_point!r}")
    loaded = load_battles(battles)
    data = rate_battles(
        loaded,
        anchor=anchor,
        n_resamples=resamples,
        seed=seed,
        confidence=confidence,
        elo_point="median" if elo_point == "median" else "final",
    )
    data = {"file": str(battles), **data}
    if output is not None:
        write_json_atomic(output, data)
    if as_json:
        print_json(data)
        return
    lines: list[str] = []
    for dimension, summary in data["dimensions"].items():
        blocks = dimension_blocks(dimension or "all battles", summary) + _style_blocks(summary)
        for block in blocks:
            lines += block_markdown(block)
    if loaded.ignored:
        lines.append(f"Ignored fields: {', '.join(loaded.ignored)}.")
    stdout.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
    if output is not None:
        stdout.print(f"written: {output}", markup=False, highlight=False)
