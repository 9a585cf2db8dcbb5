"""``python -m voxeval``: the same command as the ``voxeval`` entry point."""

from voxeval.cli.main import app

app()
