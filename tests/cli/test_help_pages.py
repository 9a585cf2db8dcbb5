"""Every ``--help`` page shows every word of its command's and its options' help texts, and
joins a docstring's wrapped source lines into paragraphs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from voxeval.cli.main import app

# Panel borders are drawn around options.
_NOT_WORDS = r"\s│╭╮╰╯─"


def _pages(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _pages(sub, [*path, name])


PAGES = list(_pages(typer.main.get_command(app), []))


def _words(text: str) -> list[str]:
    # Backticks in a help text become code formatting on the page.
    return re.findall(rf"[^{_NOT_WORDS}]+", text.replace("`", ""))


def _help_page(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_group_is_walked() -> None:
    names = {" ".join(path) for path, _ in PAGES}
    assert {"", "run", "score", "scenarios import-eva", "raters serve"} <= names
    assert len(PAGES) >= 40


@pytest.mark.parametrize(
    ("path", "command"), PAGES, ids=[" ".join(path) or "voxeval" for path, _ in PAGES]
)
def test_help_page_keeps_every_word(path: list[str], command: Any) -> None:
    shown = set(_words(_help_page(path)))
    texts = [command.help or ""] + [getattr(param, "help", None) or "" for param in command.params]
    missing = [word for text in texts for word in _words(text) if word not in shown]
    assert missing == []


def test_bracketed_defaults_and_placeholders_are_shown() -> None:
    # "[config]" was once read as a style tag and "<config stem>" as an HTML tag: both vanished.
    page = " ".join(_words(_help_page(["run"])))
    assert "runs/<config stem>" in page
    assert "[config: local]" in page
    import_page = " ".join(_words(_help_page(["scenarios", "import-eva"])))
    assert "data/<domain>_scenarios/<id>.json" in import_page


def test_docstring_lines_are_joined_into_paragraphs() -> None:
    # The source breaks this docstring between "--max-failures" and "units"; the page, 80
    # columns wide, has room for both on one line.
    lines = [line.strip() for line in _help_page(["run"]).splitlines()]
    assert any("than --max-failures units are" in line for line in lines)
