"""The ``voxeval`` command. Each command group lives in its own module under ``voxeval.cli``
and registers itself on ``app`` when imported below."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="voxeval",
    help="Evaluate voice AI: spoken queries, multi-turn dialogues and live simulated calls.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules (one import per line, sorted); each does `from voxeval.cli.main import app`.
# fmt: off
# isort: off
import voxeval.cli.commands_build  # noqa: E402, F401
import voxeval.cli.commands_run  # noqa: E402, F401
import voxeval.cli.commands_scenarios  # noqa: E402, F401
import voxeval.cli.commands_speech  # noqa: E402, F401
# fmt: on

if __name__ == "__main__":
    app()
