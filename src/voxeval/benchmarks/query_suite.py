"""Query-suite files: YAML with a header and ``queries:``, or JSONL with one query per line.

```yaml
name: my-suite
protocol: single_turn
description: what the suite measures
queries:
  - {id: q1, text: "...", category: II, checklist: ["..."]}
```

A YAML header may instead say ``format: wildspeech`` and ``data: PATH`` to read a released
WildSpeech-Bench dataset (parquet or JSONL + audio) through ``wildspeech_loader``.
Errors name the file, the item (id and position) and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voxeval.benchmarks.spoken_query import SpokenQuery
from voxeval.benchmarks.suite_info import SUITE_FILE
from voxeval.config import format_validation_error, load_yaml
from voxeval.errors import ConfigError
from voxeval.registry import names


class QuerySuiteHeader(BaseModel):
    """The top of a suite YAML file (``queries`` are validated one by one)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    protocol: Literal["single_turn"]
    description: str = ""
    format: Literal["voxeval", "wildspeech"] = "voxeval"
    data: str | None = Field(default=None, description="dataset path for format: wildspeech")
    queries: list[Any] = Field(default_factory=list)


def suite_file_path(ref: str | Path) -> Path:
    """A registered suite name, a suite file, or a folder holding ``suite.yaml``."""
    if isinstance(ref, str) and ref in names("suite"):
        from voxeval.benchmarks.suite_info import resolve_suite

        return Path(resolve_suite(ref).path)
    path = Path(ref)
    if path.is_dir():
        path = path / SUITE_FILE
    if not path.exists():
        raise ConfigError(f"{path}: suite file not found")
    return path


def validate_queries(rows: list[Any], where: str, base_dir: Path) -> list[SpokenQuery]:
    """Validate raw query mappings; ``audio`` paths become absolute (relative to
    ``base_dir``) and must exist. Ids must be unique."""
    queries: list[SpokenQuery] = []
    seen: dict[str, int] = {}
    problems: list[str] = []
    for index, row in enumerate(rows):
        label = _item_label(row, index)
        if not isinstance(row, dict):
            problems.append(f"{where}: {label}: expected a mapping, got {type(row).__name__}")
            continue
        try:
            query = SpokenQuery.model_validate(row)
        except ValidationError as exc:
            problems.append(format_validation_error(f"{where}: {label}", exc))
            continue
        if query.id in seen:
            problems.append(f"{where}: {label}: id: duplicate of item #{seen[query.id] + 1}")
            continue
        seen[query.id] = index
        if query.audio is not None:
            audio = Path(query.audio)
            if not audio.is_absolute():
                audio = (base_dir / audio).resolve()
            if not audio.exists():
                problems.append(f"{where}: {label}: audio: file not found: {audio}")
                continue
            query = query.model_copy(update={"audio": str(audio)})
        queries.append(query)
    if problems:
        raise ConfigError("\n".join(problems))
    return queries


def _item_label(row: Any, index: int) -> str:
    ident = row.get("id") if isinstance(row, dict) else None
    return f"item #{index + 1} (id={ident!r})" if ident else f"item #{index + 1}"


def read_suite_header(path: Path) -> QuerySuiteHeader:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with name, protocol and queries")
    try:
        return QuerySuiteHeader.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(path), exc)) from exc


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


def load_query_suite(ref: str | Path) -> list[SpokenQuery]:
    """Load and validate every query of a suite (name, YAML/JSONL/parquet file, or folder)."""
    path = suite_file_path(ref)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = read_jsonl(path)
        if rows and isinstance(rows[0], dict) and "user_query" in rows[0]:
            return _load_wildspeech(path)
        return validate_queries(rows, str(path), path.parent)
    if suffix == ".parquet":
        return _load_wildspeech(path)
    if suffix not in (".yaml", ".yml"):
        raise ConfigError(f"{path}: unsupported suite file type (use .yaml, .jsonl or .parquet)")
    header = read_suite_header(path)
    if header.format == "wildspeech":
        if not header.data:
            raise ConfigError(f"{path}: data: required when format is 'wildspeech'")
        return _load_wildspeech((path.parent / header.data).resolve())
    if not header.queries:
        raise ConfigError(f"{path}: queries: the suite has no queries")
    return validate_queries(header.queries, str(path), path.parent)


def suite_name(ref: str | Path) -> str:
    """The suite's declared name (file stem for JSONL/parquet)."""
    path = suite_file_path(ref)
    if path.suffix.lower() in (".yaml", ".yml"):
        return read_suite_header(path).name
    return path.stem


def _load_wildspeech(path: Path) -> list[SpokenQuery]:
    from voxeval.benchmarks.wildspeech_loader import load_wildspeech

    return load_wildspeech(path)
