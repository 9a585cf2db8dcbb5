"""Dialogue-suite files: a YAML header with ``protocol: multi_turn`` and the dialogues, inline
or in a JSONL/JSON file next to it; recordings in a folder beside them.

```yaml
name: my-dialogues
protocol: multi_turn
description: what the suite measures
dialogues: dialogues.jsonl        # or an inline list of dialogues
```

Audio paths are relative to the file that holds the dialogue. A recording named but missing
is an error; recordings are checked from their size and header against ``max_audio_s``
(default 600) and ``max_audio_mb`` (default 200). Errors name the file, the dialogue (id and
position) and the field (``turns.2.audio``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from voxeval import atomic_files
from voxeval.audio import AudioLimits, ChannelMode, probe_audio
from voxeval.audio.io import DEFAULT_MAX_AUDIO_MB, DEFAULT_MAX_AUDIO_S
from voxeval.benchmarks.jsonl_file import read_json_list, read_jsonl
from voxeval.benchmarks.mtalk.dialogue import Dialogue
from voxeval.benchmarks.suite_files import (
    existing_suite_file,
    placed_audio,
    read_header,
    unique_rows,
)
from voxeval.benchmarks.suite_info import SUITE_FILE
from voxeval.errors import AudioError, ConfigError
from voxeval.json_types import JSONReadObject, JSONReadValue

DIALOGUES_FILE = "dialogues.jsonl"


class DialogueSuiteHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    protocol: Literal["multi_turn"]
    description: str = ""
    dialogues: str | list[Any] = Field(description="a JSONL/JSON file, or the dialogues inline")
    channels: ChannelMode = Field(default="mix", description="how stereo recordings become mono")
    max_audio_s: float = Field(default=DEFAULT_MAX_AUDIO_S, gt=0)
    max_audio_mb: float = Field(default=DEFAULT_MAX_AUDIO_MB, gt=0)
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class DialogueSuite:
    name: str
    path: Path
    description: str
    dialogues: list[Dialogue]
    channels: ChannelMode = "mix"
    limits: AudioLimits = field(default_factory=AudioLimits)
    metadata: dict[str, Any] = field(default_factory=dict)

    def by_id(self) -> dict[str, Dialogue]:
        return {d.id: d for d in self.dialogues}


def dialogue_suite_path(ref: str | Path) -> Path:
    """A registered suite name, a suite file, or a folder holding ``suite.yaml``."""
    return existing_suite_file(ref, "dialogue suite")


def _ident(dialogue: Dialogue) -> str:
    return dialogue.id


def validate_dialogues(
    rows: Sequence[JSONReadValue], where: str, base_dir: Path, limits: AudioLimits | None = None
) -> list[Dialogue]:
    """Validate raw dialogue mappings; audio paths become absolute (relative to ``base_dir``),
    must exist and pass ``limits``. Ids must be unique. All problems are raised together."""
    limits = limits or AudioLimits()
    dialogues: list[Dialogue] = []
    problems: list[str] = []
    for label, dialogue in unique_rows(rows, where, Dialogue, "dialogue", _ident, problems):
        turns = []
        for number, turn in enumerate(dialogue.turns, 1):
            if turn.audio is None:
                turns.append(turn)
                continue
            audio = placed_audio(turn.audio, base_dir)
            if not audio.is_file():
                problems.append(f"{label}: turns.{number}.audio: file not found: {audio}")
                continue
            try:
                probe_audio(audio, limits)
            except AudioError as exc:
                problems.append(f"{label}: turns.{number}.audio: {exc}")
                continue
            turns.append(turn.model_copy(update={"audio": str(audio)}))
        dialogues.append(dialogue.model_copy(update={"turns": turns}))
    if problems:
        raise ConfigError("\n".join(problems))
    return dialogues


def read_dialogue_suite_header(path: Path) -> DialogueSuiteHeader:
    return read_header(path, DialogueSuiteHeader, "name, protocol and dialogues")


def load_dialogue_suite(ref: str | Path) -> DialogueSuite:
    """Load and validate every dialogue of a suite (registered name, suite file or folder)."""
    path = dialogue_suite_path(ref)
    header = read_dialogue_suite_header(path)
    limits = AudioLimits(header.max_audio_s, header.max_audio_mb)
    if isinstance(header.dialogues, list):
        rows, where, base = header.dialogues, str(path), path.parent
    else:
        data_path = (path.parent / header.dialogues).resolve()
        if not data_path.is_file():
            raise ConfigError(f"{path}: dialogues: file not found: {data_path}")
        if data_path.suffix.lower() == ".jsonl":
            rows = read_jsonl(data_path)
        elif data_path.suffix.lower() == ".json":
            rows = read_json_list(data_path, "dialogues")
        else:
            raise ConfigError(f"{path}: dialogues: use a .jsonl or .json file ({data_path.name})")
        where, base = str(data_path), data_path.parent
    if not rows:
        raise ConfigError(f"{path}: dialogues: the suite has no dialogues")
    return DialogueSuite(
        name=header.name,
        path=path,
        description=header.description,
        dialogues=validate_dialogues(rows, where, base, limits),
        channels=header.channels,
        limits=limits,
        metadata=header.metadata,
    )


def relative_path(target: str | Path, base_dir: Path) -> str:
    """``target`` relative to ``base_dir`` (absolute when no relative path exists)."""
    try:
        return os.path.relpath(Path(target).resolve(), base_dir.resolve())
    except ValueError:  # another drive on Windows
        return str(Path(target).resolve())


def write_dialogue_suite(
    dialogues: list[Dialogue],
    out_dir: str | Path,
    name: str,
    description: str = "",
    metadata: JSONReadObject | None = None,
) -> Path:
    """Write ``suite.yaml`` and ``dialogues.jsonl`` into ``out_dir`` (audio paths made relative
    to it); returns the suite file."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for dialogue in dialogues:
        row = dialogue.model_dump(mode="json", exclude_none=True)
        for turn in row["turns"]:
            if "audio" in turn:
                turn["audio"] = relative_path(turn["audio"], folder)
        lines.append(json.dumps(row, ensure_ascii=False))
    atomic_files.write_text_atomic(folder / DIALOGUES_FILE, "\n".join(lines) + "\n")
    header: dict[str, Any] = {
        "name": name,
        "protocol": "multi_turn",
        "description": description,
        "dialogues": DIALOGUES_FILE,
    }
    if metadata:
        header["metadata"] = metadata
    suite_file = folder / SUITE_FILE
    atomic_files.write_text_atomic(suite_file, yaml.safe_dump(header, sort_keys=False))
    return suite_file
