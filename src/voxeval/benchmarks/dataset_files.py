"""Datasets released as rows: a file, or a folder of ``.parquet``, ``.jsonl`` or ``.json``
files (parquet needs ``pyarrow``; without it the error says how to convert)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

from voxeval.benchmarks.jsonl_file import read_json_list, read_jsonl
from voxeval.errors import ConfigError
from voxeval.json_types import JSONScalar

DATA_SUFFIXES = (".parquet", ".jsonl", ".json")

# A value in a dataset row: JSON data, or bytes where a parquet file embeds a recording
# (read-only containers, so rows read as JSON are RowValues too)
RowValue: TypeAlias = JSONScalar | bytes | Sequence["RowValue"] | Mapping[str, "RowValue"]


def data_files(path: Path) -> list[Path]:
    """``path`` itself, or every data file under the folder ``path`` (sorted)."""
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in DATA_SUFFIXES)
    if not files:
        raise ConfigError(f"{path}: no .parquet, .jsonl or .json files found")
    return files


def read_data_file(path: Path) -> list[RowValue]:
    """The rows of one data file (parquet needs pyarrow; JSON must be a list)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ConfigError(
                f"{path}: reading parquet needs pyarrow, which is not installed; install the "
                "parquet extra (pip install 'voxeval[parquet]'), or convert the dataset to "
                "JSONL + audio files"
            ) from exc
        try:
            return list(pq.read_table(path).to_pylist())
        except Exception as exc:  # pyarrow raises its own types for a damaged file
            raise ConfigError(f"{path}: cannot read parquet ({exc})") from exc
    if suffix == ".json":
        return list(read_json_list(path, "rows"))
    return list(read_jsonl(path))
