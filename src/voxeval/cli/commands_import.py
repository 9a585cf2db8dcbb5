"""``voxeval import wildspeech|mtalk|eva``: one shape for turning a released benchmark into a
voxeval suite. The former command names (``wildspeech-suite``, ``mtalk-suite``,
``scenarios import-eva``) stay for one version as hidden aliases that print a deprecation
note and then do the same."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from voxeval.cli.command_groups import command_group
from voxeval.cli.commands_build import wildspeech_suite
from voxeval.cli.commands_mtalk import mtalk_suite
from voxeval.cli.commands_scenarios import import_eva, scenarios_app
from voxeval.cli.common import console
from voxeval.cli.main import app

P = ParamSpec("P")
R = TypeVar("R")

import_app = command_group(
    "Import a released benchmark as a voxeval suite: `wildspeech` (WildSpeech-Bench, single "
    "turn), `mtalk` (MTalk-Bench, multi-turn), `eva` (EVA-Bench, live calls)."
)
app.add_typer(import_app, name="import")

import_app.command("wildspeech")(wildspeech_suite)
import_app.command("mtalk")(mtalk_suite)
import_app.command("eva")(import_eva)


def deprecated_alias(old: str, new: str, command: Callable[P, R]) -> Callable[P, R]:
    """``command`` under its former name: the same options, after a note on stderr."""

    @functools.wraps(command)
    def aliased(*args: P.args, **kwargs: P.kwargs) -> R:
        console.print(
            f"note: `voxeval {old}` is deprecated and will be removed in the next version; "
            f"use `voxeval {new}` (same arguments)",
            style="yellow",
            highlight=False,
        )
        return command(*args, **kwargs)

    return aliased


app.command("wildspeech-suite", hidden=True)(
    deprecated_alias("wildspeech-suite", "import wildspeech", wildspeech_suite)
)
app.command("mtalk-suite", hidden=True)(
    deprecated_alias("mtalk-suite", "import mtalk", mtalk_suite)
)
scenarios_app.command("import-eva", hidden=True)(
    deprecated_alias("scenarios import-eva", "import eva", import_eva)
)
