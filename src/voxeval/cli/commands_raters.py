"""``voxeval raters study|invite|serve|export``: human evaluation studies built from runs,
served to invited raters in the browser (see docs/raters.md)."""

from __future__ import annotations

import typer

from voxeval.cli.main import app

raters_app = typer.Typer(
    help="Human raters: build a study from a run, invite raters, serve the web app, export.",
    no_args_is_help=True,
)
app.add_typer(raters_app, name="raters")
