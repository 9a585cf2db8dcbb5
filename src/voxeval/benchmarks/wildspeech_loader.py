"""Read the released WildSpeech-Bench layout into ``SpokenQuery`` items.

Rows carry ``audio``, ``user_query``, ``taskType``, ``checklist``, ``modification_type`` and
``additional_info``; they come from parquet files (needs ``pyarrow``) or JSONL next to audio
files. ``audio`` may be a path (relative to the data file), a ``{"bytes": ...}`` mapping
(Hugging Face parquet) or ``{"array": [...], "sampling_rate": N}``; embedded audio is written
once to WAV files under ``audio_dir``.

To run the dataset as a suite, point a small suite file at it
(``write_wildspeech_suite`` or ``voxeval wildspeech-suite``)::

    name: wildspeech
    protocol: single_turn
    format: wildspeech
    data: test.parquet
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import yaml
from pydantic import ValidationError

from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.jsonl_file import read_jsonl
from voxeval.benchmarks.spoken_query import PF_SUBCATEGORIES, SpokenQuery
from voxeval.config import format_validation_error
from voxeval.errors import ConfigError

# Keyword -> category, checked in order on the lower-cased task type.
TASK_KEYWORDS: list[tuple[str, str]] = [
    ("paraling", "PF"),
    ("prosod", "PF"),
    ("info", "II"),
    ("inquiry", "II"),
    ("solution", "SR"),
    ("opinion", "OE"),
    ("creation", "TC"),
    ("creative", "TC"),
    ("writing", "TC"),
]
MODIFICATION_KEYWORDS: list[tuple[str, str]] = [
    ("homophone", "near-homophone"),
    ("hphon", "near-homophone"),
    ("pause", "pause"),
    ("stress", "stress"),
    ("emphasis", "stress"),
    ("tone", "tone"),
    ("intonation", "tone"),
    ("stutter", "stutter"),
    ("disfluen", "stutter"),
]
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def map_task_type(value: Any) -> str | None:
    text = str(value or "").strip()
    if text.upper() in ("II", "SR", "OE", "TC", "PF"):
        return text.upper()
    lowered = text.lower()
    for word, category in TASK_KEYWORDS:
        if word in lowered:
            return category
    if any(word in lowered for word, _ in MODIFICATION_KEYWORDS):
        return "PF"
    return None


def map_modification(value: Any) -> str | None:
    lowered = str(value or "").lower()
    for word, sub in MODIFICATION_KEYWORDS:
        if word in lowered:
            return sub
    return None


def split_checklist(value: Any) -> list[str]:
    """A checklist given as a list, or as text with one point per line (bullets removed)."""
    if value is None:
        return []
    lines = [str(v) for v in value] if isinstance(value, list | tuple) else str(value).splitlines()
    cleaned = [_BULLET.sub("", line).strip() for line in lines]
    return [line for line in cleaned if line]


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        files = sorted(path.rglob("*.parquet")) or sorted(path.glob("*.jsonl"))
        if not files:
            raise ConfigError(f"{path}: no .parquet or .jsonl files found")
        return [row for f in files for row in _read_rows(f)]
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ConfigError(
                f"{path}: reading parquet needs pyarrow (pip install pyarrow), "
                "or convert the dataset to JSONL + audio files"
            ) from exc
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        for row in rows:
            row["_base"] = str(path.parent)
        return rows
    rows = []
    for row in read_jsonl(path):
        if not isinstance(row, dict):
            raise ConfigError(f"{path}: every line must be a JSON object")
        rows.append({**row, "_base": str(path.parent)})
    return rows


def default_audio_dir(data: Path) -> Path:
    root = Path(os.environ.get("VOXEVAL_CACHE_DIR", Path.home() / ".cache" / "voxeval"))
    digest = hashlib.sha256(str(data.resolve()).encode()).hexdigest()[:12]
    return root / "wildspeech" / digest


def _materialise(audio: Any, base: Path, item_id: str, audio_dir: Path, where: str) -> str | None:
    """A path to the item's audio file (writing embedded audio to ``audio_dir``)."""
    if audio is None:
        return None
    if isinstance(audio, str):
        path = Path(audio)
        return str(path if path.is_absolute() else base / path)
    if not isinstance(audio, dict):
        raise ConfigError(
            f"{where}: audio: expected a path or a mapping, got {type(audio).__name__}"
        )
    target = audio_dir / f"{item_id}.wav"
    if target.exists():
        return str(target)
    if audio.get("bytes"):
        try:
            data, rate = sf.read(io.BytesIO(audio["bytes"]), dtype="float32", always_2d=True)
        except Exception as exc:
            raise ConfigError(f"{where}: audio: cannot decode embedded bytes ({exc})") from exc
        write_audio(Audio(data.mean(axis=1), int(rate), source=where), target)
        return str(target)
    if audio.get("array") is not None:
        if not audio.get("sampling_rate"):
            raise ConfigError(f"{where}: audio: 'array' needs 'sampling_rate'")
        samples = np.asarray(audio["array"], dtype=np.float32)
        write_audio(Audio(samples, int(audio["sampling_rate"]), source=where), target)
        return str(target)
    if audio.get("path"):
        return _materialise(str(audio["path"]), base, item_id, audio_dir, where)
    raise ConfigError(f"{where}: audio: mapping needs 'bytes', 'array' or 'path'")


def wildspeech_row_to_query(
    row: dict[str, Any], index: int, where: str, audio_dir: Path
) -> SpokenQuery:
    raw_id = row.get("id", row.get("idx", row.get("index")))
    item_id = (
        re.sub(r"[^A-Za-z0-9_.\-]", "-", str(raw_id)) if raw_id is not None else f"ws-{index:05d}"
    )
    label = f"{where}: row {index + 1} (id={item_id!r})"
    category = map_task_type(row.get("taskType"))
    if category is None:
        raise ConfigError(f"{label}: taskType: unknown task type {row.get('taskType')!r}")
    subcategory = map_modification(row.get("modification_type"))
    if category == "PF" and subcategory not in PF_SUBCATEGORIES:
        raise ConfigError(
            f"{label}: modification_type: {row.get('modification_type')!r} is not one of "
            f"{list(PF_SUBCATEGORIES)}"
        )
    base = Path(row.get("_base", "."))
    audio = _materialise(row.get("audio"), base, item_id, audio_dir, label)
    if audio is not None and not Path(audio).exists():
        raise ConfigError(f"{label}: audio: file not found: {audio}")
    metadata = {
        "task_type": row.get("taskType"),
        "modification_type": row.get("modification_type"),
        "additional_info": row.get("additional_info"),
        "source": "wildspeech",
    }
    try:
        return SpokenQuery.model_validate(
            {
                "id": item_id,
                "text": str(row.get("user_query") or "").strip(),
                "category": category,
                "subcategory": subcategory if category == "PF" else None,
                "checklist": split_checklist(row.get("checklist")),
                "audio": audio,
                "metadata": {k: v for k, v in metadata.items() if v is not None},
            }
        )
    except ValidationError as exc:
        raise ConfigError(format_validation_error(label, exc)) from exc


def load_wildspeech(data: str | Path, audio_dir: str | Path | None = None) -> list[SpokenQuery]:
    """Every row of a WildSpeech-layout dataset (file or folder) as a ``SpokenQuery``."""
    path = Path(data)
    if not path.exists():
        raise ConfigError(f"{path}: WildSpeech data not found")
    target = Path(audio_dir) if audio_dir else default_audio_dir(path)
    rows = _read_rows(path)
    queries = [wildspeech_row_to_query(r, i, str(path), target) for i, r in enumerate(rows)]
    seen: set[str] = set()
    for query in queries:
        if query.id in seen:
            raise ConfigError(f"{path}: id: duplicate id {query.id!r}")
        seen.add(query.id)
    return queries


def write_wildspeech_suite(data: str | Path, out: str | Path, name: str = "wildspeech") -> Path:
    """A ``suite.yaml`` that runs the dataset at ``data`` with the single-turn protocol."""
    out_path = Path(out)
    if out_path.is_dir() or not out_path.suffix:
        out_path = out_path / "suite.yaml"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    data_path = Path(data).resolve()
    try:
        relative = os.path.relpath(data_path, out_path.parent.resolve())
    except ValueError:  # different drive on Windows
        relative = str(data_path)
    header = {
        "name": name,
        "protocol": "single_turn",
        "description": "WildSpeech-Bench release read by voxeval's loader",
        "format": "wildspeech",
        "data": relative,
    }
    out_path.write_text(yaml.safe_dump(header, sort_keys=False), encoding="utf-8")
    return out_path
