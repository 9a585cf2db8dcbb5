"""``voxeval raters study``: a study folder built from a finished run.

The builder reads the run's stored answers (never calls a system), copies every stimulus into
the study's ``audio/`` folder, adds the gold items and writes ``study.yaml`` and
``items.jsonl`` (``study_files``), plus ``build.json``: what was left out and why (units not
done, systems or queries filtered away). Everything random (the gold items' bases and broken
sides) is drawn from ``--seed``; the same run and options give the same study bytes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval import atomic_files
from voxeval.errors import ConfigError
from voxeval.raters.run_source import RunSource, open_run_source
from voxeval.raters.study import study_dialogues, study_queries
from voxeval.raters.study.study_audio import StudyAudio
from voxeval.raters.study.study_files import (
    ITEMS_FILE,
    STUDY_FILE,
    TASKS,
    StudyConfig,
    StudyItem,
    write_study,
)
from voxeval.raters.study.study_gold import gold_items

BUILD_FILE = "build.json"
DEFAULT_RATE = 16000

TASK_TITLES = {
    "arena": "Which assistant handled the conversation better?",
    "rubric": "Does the reply meet each criterion?",
    "score": "How good is the spoken reply?",
    "record": "Record the prompts",
}


@dataclass(frozen=True)
class StudyOptions:
    task: str
    raters_per_item: int = 3
    seed: int = 0
    gold: int = 0
    limit: int | None = None
    systems: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()  # multi-turn dimensions, or single-turn categories
    study_id: str | None = None


@dataclass
class BuiltStudy:
    study_dir: Path
    config: StudyConfig
    items: list[StudyItem]
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def gold(self) -> int:
        return sum(1 for item in self.items if item.kind == "gold")


def _check(options: StudyOptions, out_dir: Path) -> None:
    if options.task not in TASKS:
        raise ConfigError(f"--task: {options.task!r} is not one of {', '.join(TASKS)}")
    if options.raters_per_item < 1:
        raise ConfigError("--raters-per-item: must be 1 or more")
    if options.limit is not None and options.limit < 1:
        raise ConfigError("--limit: must be 1 or more")
    if options.gold < 0:
        raise ConfigError("--gold: must be 0 or more")
    if (out_dir / STUDY_FILE).exists() or (out_dir / ITEMS_FILE).exists():
        raise ConfigError(f"{out_dir}: already holds a study; choose an empty folder")


def _normal_items(source: RunSource, options: StudyOptions, audio: StudyAudio) -> list[StudyItem]:
    systems = list(options.systems or source.systems())
    task = options.task
    if source.protocol == "multi_turn":
        dialogues = study_dialogues.DialogueSource(
            source, audio, dimensions=options.dimensions, limit=options.limit
        )
        if task == "arena":
            return list(study_dialogues.arena_items(dialogues, systems))
        if task == "rubric":
            return list(study_dialogues.rubric_items(dialogues, systems))
        if task == "record":
            return list(study_dialogues.record_items(dialogues))
        raise ConfigError(
            f"--task score: scores 1-10 single-turn replies; {source.run_dir} is a "
            "multi_turn run (use arena or rubric)"
        )
    queries = study_queries.QuerySource(
        source, audio, categories=options.dimensions, limit=options.limit
    )
    if task == "score":
        return list(study_queries.score_items(queries))
    if task == "rubric":
        return list(study_queries.rubric_items(queries))
    if task == "record":
        return list(study_queries.record_items(queries))
    raise ConfigError(
        f"--task arena: compares multi-turn dialogues; {source.run_dir} is a single_turn run"
    )


def _record_rate(items: Sequence[StudyItem], study_dir: Path) -> int:
    """The suite's audio rate: the rate of its recordings (the example clips), else 16 kHz."""
    import soundfile

    rates = [
        int(soundfile.info(str(study_dir / s.path)).samplerate)
        for item in items
        for s in item.stimuli
        if s.role == "example"
    ]
    return max(set(rates), key=rates.count) if rates else DEFAULT_RATE


def _gold_every(normal: int, gold: int) -> int:
    return 0 if gold <= 0 else max(1, normal // (gold + 1))


def build_study(run_dir: Path, out_dir: Path, options: StudyOptions) -> BuiltStudy:
    _check(options, out_dir)
    source = open_run_source(run_dir, options.systems)
    out_dir.mkdir(parents=True, exist_ok=True)
    audio = StudyAudio(out_dir)
    normal = _normal_items(source, options, audio)
    if not normal:
        raise ConfigError(
            f"{run_dir}: no {options.task} items (units done: {len(source.units)}; "
            "check --systems, --dimension and that the run finished)"
        )
    gold = gold_items(options.task, normal, options.gold, audio, options.seed)
    items = normal + gold
    config = StudyConfig(
        study_id=options.study_id or out_dir.resolve().name,
        task=options.task,  # type: ignore[arg-type]
        title=TASK_TITLES[options.task],
        source_run=str(source.run_dir.resolve()),
        seed=options.seed,
        raters_per_item=options.raters_per_item,
        gold_every=_gold_every(len(normal), len(gold)),
        sample_rate=_record_rate(items, out_dir) if options.task == "record" else DEFAULT_RATE,
    )
    write_study(out_dir, config, items)
    notes = {
        "run": str(source.run_dir.resolve()),
        "run_id": source.run_id,
        "protocol": source.protocol,
        "task": options.task,
        "items": len(normal),
        "gold_items": len(gold),
        "total_audio_s": round(sum(i.total_audio_s for i in items), 3),
        "units_not_done": [
            {"item": u.item_id, "system": u.system, "status": u.status, "cause": u.cause}
            for u in source.not_done
        ],
        "options": {
            "raters_per_item": options.raters_per_item,
            "seed": options.seed,
            "gold": options.gold,
            "limit": options.limit,
            "systems": list(options.systems),
            "dimensions": list(options.dimensions),
        },
    }
    atomic_files.write_text_atomic(out_dir / BUILD_FILE, json.dumps(notes, indent=2) + "\n")
    return BuiltStudy(out_dir, config, items, notes)
