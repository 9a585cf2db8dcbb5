"""Import pairwise votes (human raters, or any other judge) from CSV or JSONL.

One vote per row (CSV, with a header) or per line (JSONL, one object each). Fields:

- ``rater`` (required): who voted;
- ``item`` (required): what was judged (a dialogue id, possibly with its dimension);
- ``first``, ``second`` (required): the systems whose replies were shown first (top / A) and
  second (bottom / B);
- ``winner`` (required): ``first``'s or ``second``'s system name, or ``tie``;
- ``first_length``, ``second_length`` (optional): reply sizes (words or seconds), both or
  neither; empty means unknown;
- ``dimension`` (optional).

Unknown fields are an error (they are usually a misspelt column). Errors name the file, the
line and the field.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voxeval.analysis.pairwise_judgement import TIE, PairwiseJudgement
from voxeval.errors import ConfigError

REQUIRED_FIELDS = ("rater", "item", "first", "second", "winner")
OPTIONAL_FIELDS = ("first_length", "second_length", "dimension")


def _text(row: Mapping[str, Any], field: str, where: str) -> str:
    value = row.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ConfigError(f"{where}: field {field!r} is missing or empty")
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise ConfigError(f"{where}: field {field!r} must be text, not {value!r}")
    return str(value).strip()


def _length(row: Mapping[str, Any], field: str, where: str) -> float | None:
    value = row.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        length = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: field {field!r} must be a number, not {value!r}") from None
    if not math.isfinite(length) or length < 0:
        raise ConfigError(f"{where}: field {field!r} must be a finite length >= 0, not {value!r}")
    return length


def vote_from_row(row: Mapping[str, Any], where: str) -> PairwiseJudgement:
    """One vote from a parsed row; ``where`` ("file:line") prefixes every error."""
    unknown = sorted(set(row) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS))
    if unknown:
        known = list(REQUIRED_FIELDS + OPTIONAL_FIELDS)
        raise ConfigError(f"{where}: unknown field(s) {unknown}; expected {known}")
    rater, item, first, second, winner = (_text(row, f, where) for f in REQUIRED_FIELDS)
    if first == second:
        raise ConfigError(f"{where}: fields 'first' and 'second' name the same system {first!r}")
    if winner not in (first, second, TIE):
        raise ConfigError(
            f"{where}: field 'winner' is {winner!r}; it must be {first!r}, {second!r} or {TIE!r}"
        )
    first_length = _length(row, "first_length", where)
    second_length = _length(row, "second_length", where)
    if (first_length is None) != (second_length is None):
        raise ConfigError(f"{where}: fields 'first_length' and 'second_length' go together")
    dimension = row.get("dimension")
    return PairwiseJudgement(
        rater=rater,
        item=item,
        first=first,
        second=second,
        winner=None if winner == TIE else winner,
        first_length=first_length,
        second_length=second_length,
        dimension=str(dimension).strip() if dimension not in (None, "") else None,
    )


def _csv_votes(path: Path) -> list[PairwiseJudgement]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            raise ConfigError(f"{path}: empty file (a header line is needed)")
        votes = []
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if None in row:
                raise ConfigError(f"{where}: more values than header columns")
            votes.append(vote_from_row(row, where))
        return votes


def _jsonl_votes(path: Path) -> list[PairwiseJudgement]:
    votes = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ConfigError(f"{where}: a vote must be a JSON object")
            votes.append(vote_from_row(row, where))
    return votes


def load_votes(path: str | Path) -> list[PairwiseJudgement]:
    """Votes from a ``.csv`` or ``.jsonl`` file (see the module doc for the fields)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_votes(path)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_votes(path)
    raise ConfigError(f"{path}: votes must be a .csv or .jsonl file")
