"""Helpers shared by CLI command modules: error display and JSON output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from rich.console import Console

from voxeval.errors import VoxevalError

F = TypeVar("F", bound=Callable[..., Any])

console = Console(stderr=True)


def friendly_errors(fn: F) -> F:
    """Show ``VoxevalError``s as one red message and exit 2, without a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except VoxevalError as exc:
            console.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise SystemExit(2) from exc

    return wrapper  # type: ignore[return-value]


def print_json(data: Any) -> None:
    """Machine-readable output on stdout (progress and messages go to stderr)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
