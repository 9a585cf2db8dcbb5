"""The record task's result: a human-voiced copy of the suite, built when every prompt of the
study has a recording (else the missing prompts are listed and nothing is built).

When several speakers recorded the same prompt, the one who recorded the most prompts is used
(ties: the first rater id), so a dialogue or suite keeps as few voices as possible. The WAV
files are written at the study's ``sample_rate`` (the suite's rate). The copy is a normal suite
folder: ``suite.yaml`` (single-turn queries) or ``suite.yaml`` + ``dialogues.jsonl``
(multi-turn), with ``audio/`` beside it; only the study's prompts are in it."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from voxeval import atomic_files
from voxeval.audio import read_audio, resample, write_audio
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite, write_dialogue_suite
from voxeval.benchmarks.suite_info import SUITE_FILE
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite, suite_name
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.raters.export.export_db import ResponseRow
from voxeval.raters.study.study_files import StudyConfig, StudyItem

HUMAN_SUITE_DIR = "human_suite"


def _chosen(
    responses: Sequence[ResponseRow], items: dict[str, StudyItem]
) -> dict[str, ResponseRow]:
    recorded = [r for r in responses if r.item_id in items and r.answer.get("path")]
    counts = Counter(r.rater_id for r in recorded)
    best: dict[str, ResponseRow] = {}
    for row in recorded:
        held = best.get(row.item_id)
        rank = (-counts[row.rater_id], row.rater_id)
        if held is None or rank < (-counts[held.rater_id], held.rater_id):
            best[row.item_id] = row
    return best


def _wav(study_dir: Path, row: ResponseRow, target: Path, rate: int) -> str:
    source = (study_dir / str(row.answer["path"])).resolve()
    if study_dir.resolve() not in source.parents or not source.is_file():
        raise ConfigError(
            f"database response {row.response_id}: field answer.path: "
            f"{row.answer['path']!r} is not a recording in {study_dir}"
        )
    audio = read_audio(source)
    write_audio(resample(audio, rate) if audio.rate != rate else audio, target, subtype="PCM_16")
    return target.name


def human_voiced_suite(
    study_dir: Path,
    config: StudyConfig,
    items: dict[str, StudyItem],
    responses: Sequence[ResponseRow],
    out_dir: Path,
) -> JSONObject:
    prompts = [item for item in items.values() if item.kind == "normal"]
    chosen = _chosen(responses, items)
    missing = [item.item_id for item in prompts if item.item_id not in chosen]
    out: dict[str, Any] = {"prompts": len(prompts), "recorded": len(prompts) - len(missing)}
    if missing:
        out["missing"] = missing
        out["suite"] = None
        return out
    folder = out_dir / HUMAN_SUITE_DIR
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    protocol = prompts[0].source.get("protocol")
    suite_ref = str(prompts[0].source.get("suite") or "")
    speakers: dict[str, str] = {}
    if protocol == "single_turn":
        queries = {q.id: q for q in load_query_suite(suite_ref)}
        rows = []
        for item in prompts:
            query = queries[str(item.source["query_id"])]
            row = chosen[item.item_id]
            name = _wav(study_dir, row, folder / "audio" / f"{query.id}.wav", config.sample_rate)
            speakers[query.id] = row.rater_id
            data = query.model_dump(mode="json", exclude_none=True)
            data.pop("render", None)  # the recording replaces the synthetic rendering
            data["audio"] = f"audio/{name}"
            data.setdefault("metadata", {})["speaker"] = row.rater_id
            rows.append(data)
        header = {
            "name": f"{suite_name(suite_ref)}-human",
            "protocol": "single_turn",
            "description": f"human-voiced copy made by study {config.study_id}",
            "queries": rows,
        }
        suite_file = folder / SUITE_FILE
        atomic_files.write_text_atomic(suite_file, yaml.safe_dump(header, sort_keys=False))
    elif protocol == "multi_turn":
        suite = load_dialogue_suite(suite_ref)
        turns: dict[str, dict[int, ResponseRow]] = defaultdict(dict)
        for item in prompts:
            turns[str(item.source["dialogue"])][int(item.source["turn"])] = chosen[item.item_id]
        dialogues = []
        for dialogue in suite.dialogues:
            if dialogue.id not in turns:
                continue
            recorded = turns[dialogue.id]
            new_turns = []
            for n, turn in enumerate(dialogue.turns, 1):
                row = recorded[n]
                target = folder / "audio" / f"{dialogue.id}_{n}.wav"
                _wav(study_dir, row, target, config.sample_rate)
                speakers[f"{dialogue.id}.turn{n}"] = row.rater_id
                new_turns.append(turn.model_copy(update={"audio": str(target)}))
            dialogues.append(dialogue.model_copy(update={"turns": new_turns}))
        suite_file = write_dialogue_suite(
            dialogues,
            folder,
            name=f"{suite.name}-human",
            description=f"human-voiced copy made by study {config.study_id}",
        )
    else:
        raise ConfigError(f"{study_dir}: record items name no source protocol ({protocol!r})")
    out.update(suite=str(suite_file), speakers=speakers, sample_rate=config.sample_rate)
    return out
