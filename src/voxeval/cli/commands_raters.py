"""``voxeval raters study|invite|serve|export``: human evaluation studies built from runs,
served to invited raters in the browser (see docs/raters.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from voxeval.cli.command_groups import command_group
from voxeval.cli.common import console, friendly_errors
from voxeval.cli.main import app

raters_app = command_group(
    "Human raters: build a study from a run, invite raters, serve the web app, export."
)
app.add_typer(raters_app, name="raters")


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


@raters_app.command("study")
@friendly_errors
def study(
    run_dir: Path = typer.Argument(..., help="a finished multi_turn or single_turn run folder"),
    task: str = typer.Option(..., "--task", help="arena | rubric | score | record"),
    out: Path = typer.Option(..., "--out", help="the study folder to create (must be empty)"),
    raters_per_item: int = typer.Option(3, "--raters-per-item", help="raters per item"),
    seed: int = typer.Option(0, "--seed", help="seeds every random choice of the build"),
    gold: int = typer.Option(0, "--gold", help="gold (attention) items with known answers"),
    limit: int | None = typer.Option(None, "--limit", help="first N dialogues or queries"),
    systems: str | None = typer.Option(None, "--systems", help="comma-separated systems"),
    dimension: str | None = typer.Option(
        None, "--dimension", help="comma-separated dimensions (multi_turn) or categories"
    ),
    study_id: str | None = typer.Option(None, "--study-id", help="default: the folder name"),
) -> None:
    """Build a study folder (study.yaml, items.jsonl, audio/) from a finished run."""
    from voxeval.raters.study.study_build import StudyOptions, build_study

    options = StudyOptions(
        task=task,
        raters_per_item=raters_per_item,
        seed=seed,
        gold=gold,
        limit=limit,
        systems=_names(systems),
        dimensions=_names(dimension),
        study_id=study_id,
    )
    built = build_study(run_dir, out, options)
    minutes = built.notes["total_audio_s"] / 60
    console.print(
        f"study {built.config.study_id!r}: {len(built.items) - built.gold} {task} items, "
        f"{built.gold} gold, {minutes:.1f} min of audio in {out}"
    )
    skipped = built.notes["units_not_done"]
    if skipped:
        console.print(f"left out {len(skipped)} unit(s) not done (see {out}/build.json)")


@raters_app.command("export")
@friendly_errors
def export(
    study_dir: Path = typer.Argument(..., help="the study folder"),
    db: str | None = typer.Option(None, "--db", help="database URL (default: STUDY/study.db)"),
    out: Path | None = typer.Option(None, "--out", help="output folder (default STUDY/export)"),
    keep_flagged: bool = typer.Option(
        False, "--keep-flagged", help="keep the answers of raters flagged by quality control"
    ),
    resamples: int = typer.Option(1000, "--resamples", help="bootstrap resamples"),
) -> None:
    """Write the answers (JSONL/CSV), rater quality and the analyses of a study."""
    from voxeval.raters.export.export import export_study

    result = export_study(
        study_dir, db=db, out_dir=out, keep_flagged=keep_flagged, resamples=resamples
    )
    analysis = result.analysis
    console.print(
        f"{analysis['responses']} responses from {analysis['raters']} raters; flagged: "
        f"{', '.join(analysis['flagged_raters']) or 'none'}; "
        f"{analysis['excluded_responses']} response(s) excluded"
    )
    for path in result.files:
        typer.echo(f"wrote {path}")
