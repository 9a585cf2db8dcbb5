"""The ``voxeval`` command. Each command group lives in its own module under ``voxeval.cli``
and registers itself on ``app`` when imported below."""

from __future__ import annotations

import importlib

import typer

from voxeval.cli.command_groups import command_group

app = command_group(
    "Evaluate voice AI: spoken queries, multi-turn dialogues and live simulated calls.",
    name="voxeval",
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules register their commands on ``app`` when imported (each does
# ``from voxeval.cli.main import app``). Add a new module's name here.
COMMAND_MODULES = (
    "commands_analyze",
    "commands_build",
    "commands_compare",
    "commands_costs",
    "commands_import",
    "commands_judges",
    "commands_mtalk",
    "commands_raters",
    "commands_raters_web",
    "commands_ratings",
    "commands_rubrics",
    "commands_run",
    "commands_scenarios",
    "commands_speech",
    "commands_view",
)
for _module in COMMAND_MODULES:
    importlib.import_module(f"voxeval.cli.{_module}")

# `voxeval --help` lists the commands by task, in this order (a command missing here fails
# tests/cli/test_help_panels.py). Hidden aliases are not listed.
HELP_PANELS: dict[str, tuple[str, ...]] = {
    "Evaluate": ("run", "validate", "score", "report", "view", "compare", "leaderboard", "costs"),
    "Suites": ("suites", "import", "build", "scenarios", "profiles", "noise-sources", "curate"),
    "Judges and raters": ("judges", "rubrics", "raters", "ratings", "human-scores", "analyze"),
    "Speech tools": ("doctor", "voices", "synth", "transcribe", "mos"),
}


def _arrange_help() -> None:
    """Give every command its task panel and sort commands and groups by ``HELP_PANELS``."""
    order = {name: i for i, name in enumerate(n for names in HELP_PANELS.values() for n in names)}
    panel = {name: title for title, names in HELP_PANELS.items() for name in names}

    def name_of(entry: typer.models.CommandInfo | typer.models.TyperInfo) -> str:
        given = entry.name
        if given is None and isinstance(entry, typer.models.CommandInfo):
            given = entry.callback.__name__.replace("_", "-") if entry.callback else ""
        return str(given)

    entries: list[typer.models.CommandInfo | typer.models.TyperInfo] = [
        *app.registered_commands,
        *app.registered_groups,
    ]
    for entry in entries:
        if not entry.hidden and name_of(entry) in panel:
            entry.rich_help_panel = panel[name_of(entry)]
    app.registered_commands.sort(key=lambda c: order.get(name_of(c), len(order)))
    app.registered_groups.sort(key=lambda g: order.get(name_of(g), len(order)))


_arrange_help()
