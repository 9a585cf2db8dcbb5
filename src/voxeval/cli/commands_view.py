"""``voxeval view [RUN...]``: browse runs in a local, read-only web app (see docs/viewer.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from voxeval.cli.common import console, friendly_errors
from voxeval.cli.main import app
from voxeval.errors import ConfigError


@app.command("view")
@friendly_errors
def view(
    runs: list[Path] = typer.Argument(
        None, help="run folders to show (default: every run folder under --root)"
    ),
    root: Path = typer.Option(Path("runs"), "--root", help="folder holding run folders"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="port (0: any free one)"),
) -> None:
    """Browse runs: summaries, a filterable unit table, audio, timelines, diffs and scores."""
    from voxeval.store.run_store import is_run_folder
    from voxeval.viewer import create_app
    from voxeval.web import free_port, serve

    for run in runs or []:
        if not is_run_folder(run):
            raise ConfigError(f"{run}: not a voxeval run folder (no run.yaml with a run_id)")
    application = create_app(runs or [], root if not runs else None)
    if port == 0:
        port = free_port(host)
    shown = f"{len(runs)} run folder(s)" if runs else f"the runs under {root}"
    typer.echo(f"voxeval view: http://{host}:{port}/ ({shown}; Ctrl+C stops)")
    if not runs and not root.is_dir():
        console.print(
            f"[yellow]{root} does not exist yet: run `voxeval run CONFIG --out {root}/NAME`[/]"
        )
    serve(application, host, port)
