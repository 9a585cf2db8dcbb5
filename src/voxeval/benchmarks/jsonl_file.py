"""Reading JSON Lines files (errors name the line) and JSON list files (errors name the file)."""

from __future__ import annotations

import json
from pathlib import Path

from voxeval.errors import ConfigError
from voxeval.json_types import JSONValue


def read_jsonl(path: Path) -> list[JSONValue]:
    """Rows of a JSONL file; a malformed line is reported with its line number."""
    rows: list[JSONValue] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: line {number}: invalid JSON ({exc.msg})") from exc
    return rows


def read_json_list(path: Path, items: str = "rows") -> list[JSONValue]:
    """A JSON file whose top level is a list of ``items``; anything else names the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})") from exc
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a JSON list of {items}")
    return data
