"""The rows ``voxeval raters export`` writes, built from the database's responses.

Item keys are the run's own keys (``source.item``: the dialogue, or the rendered query id of a
single-turn unit), so the files join with the run's LLM verdicts and scores, and the analyses
resample the independent unit (the dialogue or query), not the study item.

- votes: ``rater, item, first, second, winner`` (system or ``tie``; ``both_bad`` counts as a
  tie and is kept in ``choice``), ``dimension``, ``first_length`` / ``second_length`` (seconds
  of each side's replies), ``choice``, ``reason``; readable by ``analysis.ratings.human_votes``.
- rubric: ``rater, item, system, criterion, value`` (``load_rubric_values``).
- scores: ``rater, item_id, system, score, reason`` (``voxeval human-scores``).
- recordings: ``rater, item, prompt_text, path, duration_s, sample_rate`` and the source."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from voxeval import atomic_files
from voxeval.json_types import JSONObject
from voxeval.raters.export.export_db import ResponseRow
from voxeval.raters.quality import arena_label
from voxeval.raters.study.study_files import StudyItem

VOTE_FIELDS = (
    "rater", "item", "first", "second", "winner", "dimension",
    "first_length", "second_length", "choice", "reason",
)  # fmt: skip
RUBRIC_FIELDS = ("rater", "item", "system", "criterion", "value")
SCORE_FIELDS = ("rater", "item_id", "system", "score", "reason")
BOTH_BAD = "both_bad"
TIE = "tie"


def source_item(item: StudyItem) -> str:
    return str(item.source.get("item") or item.item_id)


def _side_seconds(item: StudyItem, side: str) -> float:
    return round(sum(s.duration_s for s in item.stimuli if s.role == side), 6)


def vote_row(row: ResponseRow, item: StudyItem) -> JSONObject:
    answer = row.answer
    side_of = {system: side for side, system in item.systems.items()}
    first, second = str(answer["first"]), str(answer["second"])
    label = arena_label(answer)
    return {
        "rater": row.rater_id,
        "item": source_item(item),
        "first": first,
        "second": second,
        "winner": label if label in (first, second) else TIE,
        "dimension": item.dimension or "",
        "first_length": _side_seconds(item, side_of.get(first, "")),
        "second_length": _side_seconds(item, side_of.get(second, "")),
        "choice": str(answer.get("choice") or ""),
        "reason": str(answer.get("reason") or ""),
    }


def rubric_rows(row: ResponseRow, item: StudyItem) -> list[JSONObject]:
    system = str(row.answer.get("system") or item.systems.get("reply", ""))
    return [
        {
            "rater": row.rater_id,
            "item": source_item(item),
            "system": system,
            "criterion": criterion,
            "value": int(value),
        }
        for criterion, value in sorted((row.answer.get("criteria") or {}).items())
    ]


def score_row(row: ResponseRow, item: StudyItem) -> JSONObject:
    return {
        "rater": row.rater_id,
        "item_id": source_item(item),
        "system": str(row.answer.get("system") or item.systems.get("reply", "")),
        "score": int(row.answer["score"]),
        "reason": str(row.answer.get("reason") or ""),
    }


def recording_row(row: ResponseRow, item: StudyItem) -> JSONObject:
    return {
        "rater": row.rater_id,
        "item": item.item_id,
        "prompt_text": item.prompt_text,
        "path": row.answer.get("path"),
        "duration_s": row.answer.get("duration_s"),
        "sample_rate": row.answer.get("sample_rate"),
        "submitted_at": row.submitted_at.isoformat(),
        "source": item.source,
    }


def response_record(row: ResponseRow, item: StudyItem | None, flagged: bool) -> JSONObject:
    """A raw response as stored, with its item's kind and whether its rater was flagged."""
    return {
        "response_id": row.response_id,
        "item_id": row.item_id,
        "kind": item.kind if item else None,
        "rater": row.rater_id,
        "rater_flagged": flagged,
        "task": row.task,
        "answer": row.answer,
        "seconds_on_page": row.seconds_on_page,
        "submitted_at": row.submitted_at.isoformat(),
        "gold_correct": row.gold_correct,
    }


def write_jsonl(path: Path, rows: Iterable[JSONObject]) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)
    atomic_files.write_text_atomic(path, text)
    return path


def write_csv(path: Path, fields: Sequence[str], rows: Iterable[JSONObject]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    temporary.replace(path)
    return path
