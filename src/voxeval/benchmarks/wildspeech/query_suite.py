"""Query-suite files: YAML with a header and ``queries:``, or JSONL with one query per line.

```yaml
name: my-suite
protocol: single_turn
description: what the suite measures
queries:
  - {id: q1, text: "...", category: II, checklist: ["..."]}
```

Recorded ``audio`` files are checked from their size and header when the suite loads, against
the header's ``max_audio_s`` (default 600) and ``max_audio_mb`` (default 200); ``channels``
(``mix``, ``left`` or ``right``; a query may set its own) says how stereo recordings become
mono. A YAML header may instead say ``format: wildspeech`` and ``data: PATH`` to read a released
WildSpeech-Bench dataset (parquet or JSONL + audio) through ``wildspeech_loader``.
Errors name the file, the item (id and position) and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import Audio, AudioLimits, ChannelMode, probe_audio, read_audio
from voxeval.audio.io import DEFAULT_MAX_AUDIO_MB, DEFAULT_MAX_AUDIO_S
from voxeval.benchmarks.jsonl_file import read_jsonl
from voxeval.benchmarks.suite_files import (
    existing_suite_file,
    placed_audio,
    read_header,
    unique_rows,
)
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.benchmarks.wildspeech.validated_suites import validated_queries
from voxeval.benchmarks.wildspeech.wildspeech_loader import load_wildspeech
from voxeval.errors import AudioError, ConfigError
from voxeval.json_types import JSONReadValue


class QuerySuiteHeader(BaseModel):
    """The top of a suite YAML file (``queries`` are validated one by one)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    protocol: Literal["single_turn"]
    description: str = ""
    format: Literal["voxeval", "wildspeech"] = "voxeval"
    data: str | None = Field(default=None, description="dataset path for format: wildspeech")
    channels: ChannelMode = Field(default="mix", description="how stereo recordings become mono")
    max_audio_s: float = Field(default=DEFAULT_MAX_AUDIO_S, gt=0, description="longest recording")
    max_audio_mb: float = Field(default=DEFAULT_MAX_AUDIO_MB, gt=0, description="largest file")
    queries: list[Any] = Field(default_factory=list)

    def audio_input(self) -> SuiteAudioInput:
        limits = AudioLimits(self.max_audio_s, self.max_audio_mb)
        return SuiteAudioInput(channels=self.channels, limits=limits)


@dataclass(frozen=True)
class SuiteAudioInput:
    """How a suite's recordings are read: the default channel choice and the size limits."""

    channels: ChannelMode = "mix"
    limits: AudioLimits = field(default_factory=AudioLimits)


def suite_file_path(ref: str | Path) -> Path:
    """A registered suite name, a suite file, or a folder holding ``suite.yaml``."""
    return existing_suite_file(ref, "suite")


def _ident(query: SpokenQuery) -> str:
    return query.id


def validate_queries(
    rows: Sequence[JSONReadValue],
    where: str,
    base_dir: Path,
    audio_input: SuiteAudioInput | None = None,
) -> list[SpokenQuery]:
    """Validate raw query mappings; ``audio`` paths become absolute (relative to
    ``base_dir``), must exist and pass ``audio_input``'s limits (checked from the header),
    and get the suite's ``channels`` unless they set their own. Ids must be unique."""
    audio_input = audio_input or SuiteAudioInput()
    queries: list[SpokenQuery] = []
    problems: list[str] = []
    for label, query in unique_rows(rows, where, SpokenQuery, "item", _ident, problems):
        if query.audio is not None:
            audio = placed_audio(query.audio, base_dir)
            if not audio.exists():
                problems.append(f"{label}: audio: file not found: {audio}")
                continue
            try:
                probe_audio(audio, audio_input.limits)
            except AudioError as exc:
                problems.append(f"{label}: audio: {exc}")
                continue
            channels = query.channels or audio_input.channels
            query = query.model_copy(update={"audio": str(audio), "channels": channels})
        queries.append(query)
    if problems:
        raise ConfigError("\n".join(problems))
    return queries


def read_suite_header(path: Path) -> QuerySuiteHeader:
    return read_header(path, QuerySuiteHeader, "name, protocol and queries")


def load_query_suite(ref: str | Path) -> list[SpokenQuery]:
    """Load and validate every query of a suite (name, YAML/JSONL/parquet file, or folder)."""
    path = suite_file_path(ref)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = read_jsonl(path)
        if rows and isinstance(rows[0], dict) and "user_query" in rows[0]:
            return _load_wildspeech(path)
        return validate_queries(rows, str(path), path.parent)  # JSONL: default limits
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
    return validated_queries(
        path,
        lambda: validate_queries(header.queries, str(path), path.parent, header.audio_input()),
    )


def suite_audio_input(ref: str | Path) -> SuiteAudioInput:
    """The channel choice and limits for a suite's recordings (defaults for JSONL/parquet)."""
    path = suite_file_path(ref)
    if path.suffix.lower() in (".yaml", ".yml"):
        return read_suite_header(path).audio_input()
    return SuiteAudioInput()


def read_query_audio(query: SpokenQuery, audio_input: SuiteAudioInput, where: str) -> Audio:
    """The recording of ``query``; an error names the suite (``where``), the item and the
    field, then the file and the problem."""
    if query.audio is None:
        raise ConfigError(f"{where}: item {query.id!r}: audio: the query has no recording")
    channels = query.channels or audio_input.channels
    try:
        return read_audio(query.audio, channels=channels, limits=audio_input.limits)
    except AudioError as exc:
        raise AudioError(f"{where}: item {query.id!r}: audio: {exc}") from exc


def suite_name(ref: str | Path) -> str:
    """The suite's declared name (file stem for JSONL/parquet)."""
    path = suite_file_path(ref)
    if path.suffix.lower() in (".yaml", ".yml"):
        return read_suite_header(path).name
    return path.stem


def _load_wildspeech(path: Path) -> list[SpokenQuery]:
    return load_wildspeech(path)
