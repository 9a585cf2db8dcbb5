"""Reading JSON Lines files with errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voxeval.errors import ConfigError


def read_jsonl(path: Path) -> list[Any]:
    """Rows of a JSONL file; a malformed line is reported with its line number."""
    rows: list[Any] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: line {number}: invalid JSON ({exc.msg})") from exc
    return rows
