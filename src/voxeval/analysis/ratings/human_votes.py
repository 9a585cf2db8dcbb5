"""Import pairwise votes and rubric verdicts (human raters, or any other judge) from CSV or
JSONL: one record per row (CSV, with a header) or per line (JSONL, one object each).

Vote fields (``load_votes``):

- ``rater`` (required): who voted;
- ``item`` (required): what was judged (a dialogue id, possibly with its dimension);
- ``first``, ``second`` (required): the systems whose replies were shown first (top / A) and
  second (bottom / B);
- ``winner`` (required): ``first``'s or ``second``'s system name, or ``tie``;
- ``first_length``, ``second_length`` (optional): reply sizes (words or seconds), both or
  neither; empty means unknown;
- ``dimension`` (optional);
- ``choice``, ``reason`` (optional, kept for reading only): the rater's button (e.g.
  ``both_bad``, counted as a tie) and written reason, as ``voxeval raters export`` writes them.

Rubric fields (``load_rubric_values``), all required: ``rater``, ``item``, ``system``,
``criterion`` (its id, e.g. ``criteria_d_2``) and ``value``: 1 / 0 (also ``true`` / ``false``,
``yes`` / ``no``).

Unknown fields are an error (they are usually a misspelt column). Errors name the file, the
line and the field.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path

from voxeval.analysis.ratings.pairwise_judgement import TIE, PairwiseJudgement
from voxeval.analysis.rubric_values import RubricValue
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadObject

REQUIRED_FIELDS = ("rater", "item", "first", "second", "winner")
OPTIONAL_FIELDS = ("first_length", "second_length", "dimension", "choice", "reason")
RUBRIC_FIELDS = ("rater", "item", "system", "criterion", "value")
_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


def _text(row: JSONReadObject, field: str, where: str) -> str:
    value = row.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ConfigError(f"{where}: field {field!r} is missing or empty")
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise ConfigError(f"{where}: field {field!r} must be text, not {value!r}")
    return str(value).strip()


def _length(row: JSONReadObject, field: str, where: str) -> float | None:
    value = row.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError  # float() refuses it too
        length = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: field {field!r} must be a number, not {value!r}") from None
    if not math.isfinite(length) or length < 0:
        raise ConfigError(f"{where}: field {field!r} must be a finite length >= 0, not {value!r}")
    return length


def vote_from_row(row: JSONReadObject, where: str) -> PairwiseJudgement:
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


def rubric_value_from_row(row: JSONReadObject, where: str) -> RubricValue:
    """One rubric verdict from a parsed row; ``where`` ("file:line") prefixes every error."""
    unknown = sorted(set(row) - set(RUBRIC_FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {unknown}; expected {list(RUBRIC_FIELDS)}")
    rater, item, system, criterion = (_text(row, f, where) for f in RUBRIC_FIELDS[:4])
    raw = row.get("value")
    text = str(raw).strip().lower() if raw is not None else ""
    if raw is True or raw == 1 or text in _TRUE:
        value = 1
    elif raw is False or raw == 0 or text in _FALSE:
        value = 0
    else:
        raise ConfigError(f"{where}: field 'value' must be 1 or 0 (true/false), not {raw!r}")
    return RubricValue(rater=rater, item=item, system=system, criterion=criterion, value=value)


def _csv_rows(path: Path) -> Iterator[tuple[JSONReadObject, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            raise ConfigError(f"{path}: empty file (a header line is needed)")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if None in row:
                raise ConfigError(f"{where}: more values than header columns")
            yield row, where


def _jsonl_rows(path: Path) -> Iterator[tuple[JSONReadObject, str]]:
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
                raise ConfigError(f"{where}: a record must be a JSON object")
            yield row, where


def _rows(path: str | Path) -> Iterator[tuple[JSONReadObject, str]]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_rows(path)
    raise ConfigError(f"{path}: records must be in a .csv or .jsonl file")


def read_records(path: str | Path) -> Iterator[tuple[JSONReadObject, str]]:
    """Each record of a ``.csv`` or ``.jsonl`` file with its ``file:line`` (for errors)."""
    return _rows(path)


def load_votes(path: str | Path) -> list[PairwiseJudgement]:
    """Pairwise votes from a ``.csv`` or ``.jsonl`` file (see the module doc for the fields)."""
    return [vote_from_row(row, where) for row, where in _rows(path)]


def load_rubric_values(path: str | Path) -> list[RubricValue]:
    """Rubric verdicts from a ``.csv`` or ``.jsonl`` file (see the module doc for the fields)."""
    return [rubric_value_from_row(row, where) for row, where in _rows(path)]
