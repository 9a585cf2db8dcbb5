"""Read the released WildSpeech-Bench layout, unmodified, into ``SpokenQuery`` items.

One row per spoken query: ``user_query`` (text), ``taskType`` (``prosodical`` is the
paralinguistic category; other names map to II/SR/OE/TC, an unknown one is kept as its own
category), ``checklist``, ``conversation_hash`` (the id), ``modification_type`` (the condition
of the released recording: ``natural_noise``, ``human_noise``, anything else = clean),
``additional_info`` (names the PF subtype, e.g. "stuttering") and ``audio``: a path (relative
to the data file), a ``{"bytes": ..., "path": ...}`` mapping (parquet) or
``{"array": [...], "sampling_rate": N}``. Rows come from a file or a folder of ``.parquet``
(needs ``pyarrow``), ``.jsonl`` or ``.json`` files.

A row that cannot be read is reported (file, row, field) and the others still load.
Embedded audio is written to WAV files named by the hash of their content, so a dataset
rewritten with its rows in another order pairs every text with the same audio; a failed import
removes the files it wrote.

To run the dataset as a suite, point a small suite file at it
(``write_wildspeech_suite`` or ``voxeval wildspeech-suite``)::

    name: wildspeech
    protocol: single_turn
    format: wildspeech
    data: test.parquet
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from voxeval import atomic_files
from voxeval.benchmarks.dataset_files import RowValue, data_files, read_data_file
from voxeval.benchmarks.embedded_audio import EmbeddedAudioWriter, RowError
from voxeval.benchmarks.wildspeech.spoken_query import CATEGORIES, OPEN_CATEGORIES, SpokenQuery
from voxeval.errors import ConfigError
from voxeval.json_types import JSONValue

log = logging.getLogger(__name__)

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
RELEASED_CONDITIONS = ("natural_noise", "human_noise")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]")


def map_task_type(value: RowValue) -> str | None:
    """II/SR/OE/TC/PF for a task type the release (or a variant of it) uses, else None."""
    text = str(value or "").strip()
    if text.upper() in CATEGORIES:
        return text.upper()
    lowered = text.lower()
    for word, category in TASK_KEYWORDS:
        if word in lowered:
            return category
    if any(word in lowered for word, _ in MODIFICATION_KEYWORDS):
        return "PF"
    return None


def task_category(value: RowValue) -> str | None:
    """The category of a row: a known code, or the task type itself (lower case, words joined
    by '-') kept as its own category; None when the row has no task type."""
    known = map_task_type(value)
    if known is not None:
        return known
    own = re.sub(r"[^a-z0-9]+", "-", str(value or "").lower()).strip("-")
    return own or None


def map_modification(value: RowValue) -> str | None:
    """The PF subtype named in ``value`` (e.g. "stuttering" -> "stutter"), else None."""
    lowered = str(value or "").lower()
    for word, sub in MODIFICATION_KEYWORDS:
        if word in lowered:
            return sub
    return None


def released_condition(value: RowValue) -> str:
    """The condition of a released recording from its ``modification_type``."""
    normalised = re.sub(r"[\s\-]+", "_", str(value or "").strip().lower())
    return normalised if normalised in RELEASED_CONDITIONS else "clean"


def split_checklist(value: RowValue) -> list[str]:
    """A checklist given as a list, or as text with one point per line (bullets removed)."""
    if value is None:
        return []
    lines = [str(v) for v in value] if isinstance(value, list | tuple) else str(value).splitlines()
    cleaned = [_BULLET.sub("", line).strip() for line in lines]
    return [line for line in cleaned if line]


@dataclass(frozen=True)
class RowReject:
    """A row left out of the import, with the field that could not be read."""

    file: str
    row: int  # 1-based, in the file
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: row {self.row}: {self.field}: {self.message}"


@dataclass
class WildSpeechImport:
    queries: list[SpokenQuery] = field(default_factory=list)
    rejects: list[RowReject] = field(default_factory=list)

    def summary(self) -> str:
        """One line of counts, then one line per rejected row."""
        head = f"loaded {len(self.queries)} rows, rejected {len(self.rejects)}"
        return "\n".join([head, *(f"  {r}" for r in self.rejects)])


@dataclass(frozen=True)
class _Row:
    file: Path
    number: int  # 1-based
    data: RowValue


def default_audio_dir() -> Path:
    """Where embedded audio is written; files are named by content, so one folder serves
    every dataset."""
    root = Path(os.environ.get("VOXEVAL_CACHE_DIR", Path.home() / ".cache" / "voxeval"))
    return root / "wildspeech" / "audio"


def _row_id(row: dict[str, RowValue]) -> str:
    for key in ("conversation_hash", "id", "idx"):
        value = row.get(key)
        if value is not None and str(value).strip():
            return _UNSAFE_ID.sub("-", str(value).strip()).lstrip("-_.") or "ws"
    # No id in the row: derived from its text, never from its position in the file.
    text = str(row.get("user_query") or "")
    return "ws-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def row_to_query(row: RowValue, base: Path, writer: EmbeddedAudioWriter) -> SpokenQuery:
    """One released row as a query; ``RowError`` names the field that could not be read."""
    if not isinstance(row, dict):
        raise RowError("<row>", f"expected a mapping, got {type(row).__name__}")
    text = str(row.get("user_query") or "").strip()
    if not text:
        raise RowError("user_query", "missing or empty")
    category = task_category(row.get("taskType"))
    if category is None:
        raise RowError("taskType", "missing or empty")
    subcategory = None
    if category == "PF":
        subcategory = map_modification(row.get("additional_info")) or map_modification(
            row.get("modification_type")
        )
        if subcategory is None:
            raise RowError(
                "additional_info",
                f"names no paralinguistic subtype: {str(row.get('additional_info'))[:80]!r}",
            )
    metadata = {
        "task_type": row.get("taskType"),
        "modification_type": row.get("modification_type"),
        "additional_info": row.get("additional_info"),
        "conversation_hash": row.get("conversation_hash"),
        "source": "wildspeech",
    }
    fields = {
        "id": _row_id(row),
        "text": text,
        "category": category,
        "subcategory": subcategory,
        "checklist": split_checklist(row.get("checklist")),
        "condition": released_condition(row.get("modification_type")),
        "metadata": {k: _plain(v) for k, v in metadata.items() if v is not None},
    }
    try:
        SpokenQuery.model_validate(fields, context=OPEN_CATEGORIES)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise RowError(str(first["loc"][0]) if first["loc"] else "<row>", first["msg"]) from exc
    fields["audio"] = writer.materialise(row.get("audio"), base)
    return SpokenQuery.model_validate(fields, context=OPEN_CATEGORIES)


def _plain(value: RowValue) -> JSONValue:
    """Metadata as JSON values (parquet may hold numpy or bytes values)."""
    return json.loads(json.dumps(value, default=str))


def import_wildspeech(data: str | Path, audio_dir: str | Path | None = None) -> WildSpeechImport:
    """Every readable row of a WildSpeech-layout dataset (file or folder), and the rejects.

    Raises ``ConfigError`` when a file cannot be read or no row loads; the audio files written
    by the failed import are removed."""
    path = Path(data)
    if not path.exists():
        raise ConfigError(f"{path}: WildSpeech data not found")
    writer = EmbeddedAudioWriter(Path(audio_dir) if audio_dir else default_audio_dir())
    result = WildSpeechImport()
    try:
        rows = [
            _Row(f, number, row)
            for f in data_files(path)
            for number, row in enumerate(read_data_file(f), 1)
        ]
        seen: set[tuple[str, str | None]] = set()
        ids: set[str] = set()
        for row in rows:
            try:
                query = row_to_query(row.data, row.file.parent, writer)
            except RowError as exc:
                result.rejects.append(RowReject(str(row.file), row.number, exc.field, str(exc)))
                continue
            if (query.id, query.condition) in seen:
                result.rejects.append(
                    RowReject(
                        str(row.file), row.number, "conversation_hash", f"duplicate {query.id!r}"
                    )
                )
                continue
            seen.add((query.id, query.condition))
            if query.id in ids:  # the same query released in another condition
                query = query.model_copy(update={"id": f"{query.id}.{query.condition}"})
            ids.add(query.id)
            result.queries.append(query)
        if not result.queries:
            raise ConfigError(f"{path}: no row could be read\n{result.summary()}")
    except BaseException:
        writer.discard()
        raise
    return result


def load_wildspeech(data: str | Path, audio_dir: str | Path | None = None) -> list[SpokenQuery]:
    """The readable rows of a WildSpeech-layout dataset; rejected rows are logged."""
    result = import_wildspeech(data, audio_dir)
    if result.rejects:
        log.warning("%s: %s", data, result.summary())
    return result.queries


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
    atomic_files.write_text_atomic(out_path, yaml.safe_dump(header, sort_keys=False))
    return out_path
