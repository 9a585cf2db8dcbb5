"""``voxeval raters export``: a study's answers as files, the raters' quality, and the
analyses of the human answers (``export_analysis``), in ``<study>/export`` by default:

    responses.jsonl  every accepted response as stored (gold and flagged raters included)
    votes.jsonl/csv | rubric.jsonl/csv | scores.jsonl/csv | recordings.jsonl  (by task)
    raters.csv       per-rater quality and flags (``quality``)
    analysis.json    quality, gold, exclusions and the task's analysis; analysis.md: a summary
    human_suite/     record task: the human-voiced suite, when every prompt was recorded

Gold items never enter the task files or the ratings; they are reported under ``gold``.
Raters flagged by quality control are left out unless ``keep_flagged``; the export says how
many responses that removed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval import atomic_files
from voxeval.errors import ConfigError
from voxeval.raters.export import export_analysis as analyses
from voxeval.raters.export import export_files as files
from voxeval.raters.export.export_db import (
    database_url,
    load_items,
    load_raters,
    load_responses,
    open_study_engine,
)
from voxeval.raters.export.export_recordings import human_voiced_suite
from voxeval.raters.export.export_summary import analysis_markdown
from voxeval.raters.quality import gold_answers, study_quality_of
from voxeval.raters.study.study_files import StudyItem, load_study_config, load_study_items
from voxeval.store import RunStore
from voxeval.store.run_store import is_run_folder

EXPORT_DIR = "export"
RATER_FIELDS = (
    "rater_id", "responses", "gold_answered", "gold_correct", "gold_accuracy", "compared",
    "agreed", "agreement", "kappa", "pool_agreement", "p_value", "p_holm", "flagged", "flags",
)  # fmt: skip


@dataclass
class ExportResult:
    out_dir: Path
    analysis: dict[str, Any]
    files: list[Path] = field(default_factory=list)


def _source_run(source_run: str | None) -> RunStore | None:
    if not source_run or not is_run_folder(Path(source_run)):
        return None
    return RunStore(source_run)


def export_study(
    study_dir: Path,
    *,
    db: str | None = None,
    out_dir: Path | None = None,
    keep_flagged: bool = False,
    resamples: int = 1000,
) -> ExportResult:
    config = load_study_config(study_dir)
    items: dict[str, StudyItem] = {i.item_id: i for i in load_study_items(study_dir, config)}
    engine = open_study_engine(database_url(study_dir, db))
    try:
        for item_id, item in load_items(engine, config.study_id).items():
            items.setdefault(item_id, item)
        responses = load_responses(engine, config.study_id)
        accounts = load_raters(engine, config.study_id)
    finally:
        engine.dispose()
    unknown = sorted({r.item_id for r in responses} - set(items))
    if unknown:
        raise ConfigError(
            f"{study_dir}/{config.items_file}: the database has answers to unknown items "
            f"{unknown[:5]}"
        )
    out = out_dir or study_dir / EXPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    quality = study_quality_of(config.task, responses, items, raters=accounts)
    flagged = quality.flagged()
    excluded = set() if keep_flagged else flagged
    normal = [r for r in responses if items[r.item_id].kind == "normal"]
    kept = [r for r in normal if r.rater_id not in excluded]
    written: list[Path] = [
        files.write_jsonl(
            out / "responses.jsonl",
            (files.response_record(r, items.get(r.item_id), r.rater_id in flagged)
             for r in responses),
        )
    ]  # fmt: skip
    run = _source_run(config.source_run)
    analysis: dict[str, Any] = {
        "study_id": config.study_id,
        "task": config.task,
        "source_run": config.source_run,
        "source_run_available": run is not None,
        "responses": len(responses),
        "normal_responses": len(normal),
        "gold_responses": len(responses) - len(normal),
        "raters": len({r.rater_id for r in responses}),  # who answered, not who was invited
        "invited_raters": len(accounts),
        "flagged_raters": sorted(flagged),
        "keep_flagged": keep_flagged,
        "excluded_responses": len(normal) - len(kept),
        "quality": quality.to_dict(),
        "gold": analyses.gold_summary(
            [(g.rater, g.item, g.correct) for g in gold_answers(responses, items)]
        ),
    }
    seed = config.seed
    try:
        if config.task == "arena":
            rows = [files.vote_row(r, items[r.item_id]) for r in kept]
            written += [
                files.write_jsonl(out / "votes.jsonl", rows),
                files.write_csv(out / "votes.csv", files.VOTE_FIELDS, rows),
            ]
            analysis["arena"] = (
                analyses.arena_analysis(out / "votes.jsonl", run, seed=seed, resamples=resamples)
                if rows
                else {"not_run": "no votes to analyse"}
            )
        elif config.task == "rubric":
            rows = [v for r in kept for v in files.rubric_rows(r, items[r.item_id])]
            written += [
                files.write_jsonl(out / "rubric.jsonl", rows),
                files.write_csv(out / "rubric.csv", files.RUBRIC_FIELDS, rows),
            ]
            protocol = next(iter(items.values())).source.get("protocol", "")
            analysis["rubric"] = (
                analyses.rubric_analysis(out / "rubric.jsonl", run, str(protocol), seed=seed)
                if rows
                else {"not_run": "no rubric answers to analyse"}
            )
        elif config.task == "score":
            rows = [files.score_row(r, items[r.item_id]) for r in kept]
            written += [
                files.write_jsonl(out / "scores.jsonl", rows),
                files.write_csv(out / "scores.csv", files.SCORE_FIELDS, rows),
            ]
            query_ids = {
                files.source_item(i): str(i.source.get("query_id") or files.source_item(i))
                for i in items.values()
            }
            analysis["score"] = (
                analyses.score_analysis(out / "scores.jsonl", run, query_ids, seed=seed)
                if rows
                else {"not_run": "no scores to analyse"}
            )
        else:
            rows = [files.recording_row(r, items[r.item_id]) for r in kept]
            written.append(files.write_jsonl(out / "recordings.jsonl", rows))
            analysis["record"] = human_voiced_suite(study_dir, config, items, kept, out)
    finally:
        if run is not None:
            run.close()
    rater_rows = []
    for rater in quality.raters:
        row = rater.to_dict()
        row["flags"] = ";".join(rater.flags)
        rater_rows.append(row)
    written.append(files.write_csv(out / "raters.csv", RATER_FIELDS, rater_rows))
    text = json.dumps(analysis, indent=2, allow_nan=False, default=str) + "\n"
    atomic_files.write_text_atomic(out / "analysis.json", text)
    atomic_files.write_text_atomic(out / "analysis.md", analysis_markdown(analysis))
    written += [out / "analysis.json", out / "analysis.md"]
    return ExportResult(out, analysis, written)
