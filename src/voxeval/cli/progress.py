"""The progress display of CLI commands that count items as they go."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from voxeval.cli.common import console


def counting_progress(*, disable: bool = False) -> Progress:
    """Label, bar and done/total on the error console, gone when it ends (``disable`` for a
    command printing JSON)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=disable,
    )
