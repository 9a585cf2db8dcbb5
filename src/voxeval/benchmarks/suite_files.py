"""What the query-suite and dialogue-suite loaders share: finding the suite file, reading
its header, naming a row in an error, and placing a row's audio file."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from voxeval.benchmarks.suite_info import SUITE_FILE, SUITES, resolve_suite
from voxeval.config import format_validation_error, load_yaml
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadValue

Header = TypeVar("Header", bound=BaseModel)
RowModel = TypeVar("RowModel", bound=BaseModel)


def suite_file_candidate(ref: str | Path) -> Path:
    """The registered suite's path for a suite name, else ``ref`` (``suite.yaml`` inside it
    for a folder); the caller checks that the file is there."""
    if isinstance(ref, str) and ref in SUITES.names():
        return Path(resolve_suite(ref).path)
    path = Path(ref)
    return path / SUITE_FILE if path.is_dir() else path


def existing_suite_file(ref: str | Path, kind: str) -> Path:
    """``suite_file_candidate(ref)``, which must be a file: else a ``ConfigError`` naming it
    as a missing ``kind`` file."""
    path = suite_file_candidate(ref)
    if not path.is_file():
        raise ConfigError(f"{path}: {kind} file not found")
    return path


def read_header(path: Path, model: type[Header], expects: str) -> Header:
    """The suite file's top-level mapping as ``model``; ``expects`` names its main keys."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with {expects}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(path), exc)) from exc


def row_label(row: JSONReadValue, index: int, noun: str) -> str:
    """``NOUN #N (id='...')`` for error messages (1-based, the id when the row has one)."""
    ident = row.get("id") if isinstance(row, dict) else None
    return f"{noun} #{index + 1} (id={ident!r})" if ident else f"{noun} #{index + 1}"


def unique_rows(
    rows: Sequence[JSONReadValue],
    where: str,
    model: type[RowModel],
    noun: str,
    ident: Callable[[RowModel], str],
    problems: list[str],
) -> Iterator[tuple[str, RowModel]]:
    """Each row of a suite as ``model``, with its label (``WHERE: NOUN #N (id=...)``) for
    further messages. A row that is not a mapping, does not validate, or repeats an earlier
    ``ident`` is skipped and its problem appended to ``problems`` (raised together by the
    caller)."""
    seen: dict[str, int] = {}
    for index, row in enumerate(rows):
        label = f"{where}: {row_label(row, index, noun)}"
        if not isinstance(row, dict):
            problems.append(f"{label}: expected a mapping, got {type(row).__name__}")
            continue
        try:
            item = model.model_validate(row)
        except ValidationError as exc:
            problems.append(format_validation_error(label, exc))
            continue
        key = ident(item)
        if key in seen:
            problems.append(f"{label}: id: duplicate of {noun} #{seen[key] + 1}")
            continue
        seen[key] = index
        yield label, item


def placed_audio(ref: str, base_dir: Path) -> Path:
    """An audio path as written in a suite: absolute as it is, else relative to the suite."""
    audio = Path(ref)
    return audio if audio.is_absolute() else (base_dir / audio).resolve()
