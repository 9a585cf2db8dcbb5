"""The runner's warning with examples (kept scores, kept or unfinished comparisons): the
count, why, and the first three examples, printed as text even when they look like markup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from rich.console import Console

from voxeval.api.context import RunContext
from voxeval.runner.faults import warn_with_examples


@dataclass
class _Context:
    console: Console


def test_the_warning_names_the_count_why_and_three_escaped_examples() -> None:
    console = Console(record=True, width=200, color_system=None)
    examples = ["u1|clean|sys|0 wer", "[bold]u2[/bold] mos", "u3 wer", "u4 wer"]
    warn_with_examples(
        cast(RunContext, _Context(console)), "kept 4 stored scores", "that stayed", examples
    )
    text = console.export_text().strip()
    assert text == (
        "kept 4 stored scores that stayed, e.g. u1|clean|sys|0 wer; [bold]u2[/bold] mos; u3 wer"
    )
