"""Helpers shared by CLI command modules: error display, JSON output, and the redaction of
secrets from everything a command prints (see ``voxeval.redaction``)."""

from __future__ import annotations

import functools
import json
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, ParamSpec, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from voxeval.errors import VoxevalError
from voxeval.redaction import redact_text

P = ParamSpec("P")
R = TypeVar("R")


class RedactingConsole(Console):
    """A rich console that redacts secrets from text *before* it is laid out: a key wrapped
    over two terminal lines would escape redaction of the finished output."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(redact_text(text), **kwargs)


class RedactingStream:
    """A text stream that redacts every write (logging, warnings, tracebacks, plain echo)."""

    def __init__(self, inner: IO[str]) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(redact_text(text))
        return len(text)  # callers count what they passed, not what was printed

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer ...
        return getattr(self._inner, name)


# soft wrap: a message is one logical line however narrow the terminal, so a path or field name
# in it is never split (users grep these, and CI terminals are 80 columns)
console = RedactingConsole(stderr=True, soft_wrap=True)


@contextmanager
def redacted_output() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through redaction while a command runs."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def friendly_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Show ``VoxevalError``s as one red message and exit 2, without a traceback. Everything
    the command prints is redacted; an unexpected exception prints its (redacted) traceback
    and exits 1 instead of reaching Python's handler with the secret in its message."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with redacted_output():
            try:
                return fn(*args, **kwargs)
            except VoxevalError as exc:
                # escaped: a message like "pip install 'voxeval[web]'" is not rich markup
                console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
                raise SystemExit(2) from exc
            # typer.Exit is its own class, not click's Exit: both end the command with their code
            except (
                typer.Exit,
                click.exceptions.Exit,
                click.exceptions.Abort,
                click.ClickException,
            ):
                raise
            except Exception as exc:
                sys.stderr.write("".join(traceback.format_exception(exc)))
                raise SystemExit(1) from exc

    return wrapper


def print_json(data: Any) -> None:
    """Machine-readable output on stdout (progress and messages go to stderr)."""
    sys.stdout.write(redact_text(json.dumps(data, indent=2, default=str)) + "\n")
