"""The ``voxeval`` command. Each command group lives in its own module under ``voxeval.cli``
and registers itself on ``app`` when imported below."""

from __future__ import annotations

import importlib

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
