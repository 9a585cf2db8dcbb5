"""How every ``voxeval`` command group is made, so that all ``--help`` pages read alike."""

from __future__ import annotations

from typing import Final, Literal, TypedDict, Unpack

import typer

# Markdown joins a docstring's wrapped lines into paragraphs (the "rich" mode keeps every
# source line break) and leaves square brackets alone (the "rich" mode takes "[config]" for
# a style tag and drops it). Angle brackets read as HTML there: help texts put
# `<placeholders>` in backticks.
HELP_MARKUP: Final[Literal["markdown"]] = "markdown"


class GroupOptions(TypedDict, total=False):
    """Options of ``typer.Typer`` a group sets besides the project's formatting."""

    name: str
    add_completion: bool
    pretty_exceptions_enable: bool


def command_group(help_text: str, **options: Unpack[GroupOptions]) -> typer.Typer:
    """A Typer app for a group of commands, with the project's help formatting."""
    return typer.Typer(
        help=help_text, no_args_is_help=True, rich_markup_mode=HELP_MARKUP, **options
    )
