"""A study folder, as ``voxeval raters study`` writes it and ``voxeval raters serve`` reads it:

    STUDY/
      study.yaml     # StudyConfig
      items.jsonl    # one StudyItem per line
      audio/...      # every stimulus the pages play (copied from the run; nothing else served)
      recordings/    # record task: the speakers' WAV files
      study.db       # the default SQLite database (``--db URL`` for PostgreSQL)

Errors name the file, the line and the field.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from voxeval.config import read_yaml_afresh
from voxeval.errors import ConfigError

Task = Literal["arena", "rubric", "score", "record"]
TASKS: tuple[str, ...] = ("arena", "rubric", "score", "record")
STUDY_FILE = "study.yaml"
ITEMS_FILE = "items.jsonl"
AUDIO_DIR = "audio"
RECORDINGS_DIR = "recordings"
DEFAULT_DB = "study.db"


class Stimulus(BaseModel):
    """One audio clip a page plays; every one must be played to the end before answering."""

    model_config = ConfigDict(extra="forbid")

    id: str  # unique within its item: "u1" (user turn 1), "a1", "b1", "reply", "query", ...
    role: Literal["user", "a", "b", "reply", "query", "example"]
    turn: int | None = None  # 1-based dialogue turn
    path: str  # relative to the study folder, under audio/
    duration_s: float = Field(gt=0)
    text: str | None = None  # shown only where the task shows text (e.g. record examples)

    @field_validator("path")
    @classmethod
    def _inside_audio(cls, value: str) -> str:
        parts = PurePosixPath(value).parts
        if not parts or parts[0] != AUDIO_DIR or ".." in parts or value.startswith("/"):
            raise ValueError(f"must be a relative path under {AUDIO_DIR}/ without '..'")
        return value


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    text: str


class StudyItem(BaseModel):
    """What one rater judges once."""

    model_config = ConfigDict(extra="forbid")

    item_id: str
    kind: Literal["normal", "gold"] = "normal"
    title: str  # the instruction or capability description shown on top
    context: str = ""  # more text shown to the rater (e.g. the query's checklist intro)
    dimension: str | None = None
    stimuli: list[Stimulus] = Field(default_factory=list)
    # hidden from raters until after their answer: arena {"a": sys, "b": sys};
    # rubric / score {"reply": sys}; record: {}
    systems: dict[str, str] = Field(default_factory=dict)
    criteria: list[Criterion] = Field(default_factory=list)  # rubric checkboxes
    checklist: list[str] = Field(default_factory=list)  # score task: what a good reply covers
    prompt_text: str | None = None  # record task: the text the speaker reads
    # known answer of a gold / attention item: arena {"choice": "a"|"b"|"tie"|"both_bad"},
    # rubric {"criteria": {id: 0|1}}, score {"min": int, "max": int}
    gold: dict[str, Any] | None = None
    source: dict[str, Any] = Field(default_factory=dict)  # run, unit keys, item id

    @property
    def total_audio_s(self) -> float:
        return float(sum(s.duration_s for s in self.stimuli))


class StudyConfig(BaseModel):
    """study.yaml."""

    model_config = ConfigDict(extra="forbid")

    study_id: str
    task: Task
    title: str
    source_run: str | None = None
    seed: int = 0
    raters_per_item: int = Field(default=3, ge=1)  # target distinct raters per normal item
    min_time_factor: float = Field(default=1.0, ge=0)  # min time on page = factor x audio
    gold_every: int = Field(default=0, ge=0)  # a gold item after every N items (0: none)
    sample_rate: int = Field(default=16000, ge=8000)  # record task: WAV rate (the suite's)
    rate_limit_per_minute: int = Field(default=30, ge=1)  # answers per rater per minute
    training: str = ""  # extra text for the training page (each task has its own default)
    items_file: str = ITEMS_FILE


def _pydantic_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return f"field '{where}': {first['msg']}"


def load_study_config(path: Path) -> StudyConfig:
    """Read study.yaml (the file, or the folder holding it)."""
    path = path / STUDY_FILE if path.is_dir() else path
    data = read_yaml_afresh(path, "no such study file")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of study settings")
    try:
        return StudyConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_pydantic_problem(exc)}") from exc


def load_study_items(study_dir: Path, config: StudyConfig) -> list[StudyItem]:
    """Read items.jsonl; also checks every stimulus file exists and item ids are unique."""
    path = study_dir / config.items_file
    if not path.exists():
        raise ConfigError(f"{path}: no such items file")
    items: list[StudyItem] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = StudyItem.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        except ValidationError as exc:
            raise ConfigError(f"{path}:{number}: {_pydantic_problem(exc)}") from exc
        if item.item_id in seen:
            raise ConfigError(f"{path}:{number}: field 'item_id': duplicate {item.item_id!r}")
        seen.add(item.item_id)
        for stimulus in item.stimuli:
            if not (study_dir / stimulus.path).is_file():
                raise ConfigError(
                    f"{path}:{number}: field 'stimuli.{stimulus.id}.path': "
                    f"missing file {stimulus.path}"
                )
        items.append(item)
    if not items:
        raise ConfigError(f"{path}: no items")
    return items


def write_study(study_dir: Path, config: StudyConfig, items: list[StudyItem]) -> Path:
    """Write study.yaml and items.jsonl (the audio files must already be in place)."""
    study_dir.mkdir(parents=True, exist_ok=True)
    (study_dir / config.items_file).write_text(
        "".join(item.model_dump_json(exclude_none=True) + "\n" for item in items),
        encoding="utf-8",
    )
    path = study_dir / STUDY_FILE
    path.write_text(
        yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path
