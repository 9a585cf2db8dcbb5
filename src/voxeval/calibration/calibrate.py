"""``voxeval judges calibrate`` without the command line: pick the metrics that can be
calibrated here, build their development sets, judge every example and write
``calibration.json`` (the figures) and ``answers.jsonl`` (each example's labels, edit and the
judge's full answer)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from voxeval.atomic_files import write_json_atomic, write_text_atomic
from voxeval.calibration.clean_calls import CleanCall
from voxeval.calibration.dev_set import MIN_ITEMS, AudioBuilder, DevSet, build_dev_set
from voxeval.calibration.judge_runs import (
    JudgedExample,
    judge_examples,
    metric_summary,
    unreachable,
)
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.calibration.speech_defects import Renderer, mispronounced_entity
from voxeval.calibration.text_defects import DefectEdit
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadValue, JSONValue
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge import Judge
from voxeval.scoring.metric import METRICS
from voxeval.scoring.replies.reply_record import ScoringResources

AGENT_VOICE = "piper:joe"


@dataclass
class CalibrationPlan:
    metrics: list[str]  # to calibrate
    skipped: dict[str, str] = field(default_factory=dict)  # metric -> why not


def plan_metrics(
    requested: list[str] | None, *, audio_judge: bool, registered: set[str] | None = None
) -> CalibrationPlan:
    """The metrics to calibrate: ``requested`` (default: every metric with a development
    set) that are registered here and whose judge is configured; the others with why not.
    A name with no development set is an error."""
    known = list(METRIC_LABELS)
    wanted = requested or known
    unknown = [m for m in wanted if m not in METRIC_LABELS]
    if unknown:
        raise ConfigError(
            f"--metrics: no development set for {', '.join(unknown)}; known: {', '.join(known)}"
        )
    names = registered if registered is not None else set(METRICS.names())
    plan = CalibrationPlan(metrics=[])
    for metric in wanted:
        if metric not in names:
            plan.skipped[metric] = "not a registered metric in this installation"
        elif METRIC_LABELS[metric].judge == "audio" and not audio_judge:
            plan.skipped[metric] = "needs an audio judge (--audio-judge CONFIG)"
        else:
            plan.metrics.append(metric)
    return plan


def scoring_resources(judge: Judge, audio_judge: Judge | None) -> ScoringResources:
    """The resources the metrics read: the judges, nothing else (no scoring ASR: a
    calibrated metric must not fall back to anything but its judge)."""
    return ScoringResources(
        judge=lambda: judge,
        audio_judge=(lambda: audio_judge) if audio_judge is not None else None,
    )


def audio_builder(render: Renderer | None = None) -> AudioBuilder:
    if render is None:
        from voxeval.providers.voices.speech_renderer import shared_renderer

        render = shared_renderer(AGENT_VOICE)
    return partial(_build_audio, render=render)


def _build_audio(
    call: CleanCall, rng: np.random.Generator, render: Renderer
) -> tuple[LiveCallRecord, LiveCallRecord, DefectEdit] | None:
    return mispronounced_entity(call, rng, render)


@dataclass
class CalibrationResult:
    report: dict[str, Any]
    judged: list[JudgedExample]

    @property
    def unreachable_metrics(self) -> list[str]:
        return [m for m, s in self.report["metrics"].items() if unreachable(s)]


def calibrate(
    plan: CalibrationPlan,
    judge: Judge,
    audio_judge: Judge | None = None,
    *,
    per_defect: int = 3,
    min_items: int = MIN_ITEMS,
    seed: int = 0,
    concurrency: int = 4,
    render: Renderer | None = None,
    on_built: Callable[[DevSet], None] | None = None,
    on_done: Callable[[JudgedExample], None] | None = None,
) -> CalibrationResult:
    audio = None
    if audio_judge is not None and any(METRIC_LABELS[m].judge == "audio" for m in plan.metrics):
        audio = audio_builder(render)
    dev_set = build_dev_set(
        plan.metrics, per_defect=per_defect, seed=seed, audio=audio, min_items=min_items
    )
    if on_built is not None:
        on_built(dev_set)
    resources = scoring_resources(judge, audio_judge)
    judged = judge_examples(dev_set.examples, resources, concurrency=concurrency, on_done=on_done)
    metrics = {
        m: metric_summary(m, [j for j in judged if j.example.metric == m]) for m in plan.metrics
    }
    report = {
        "seed": seed,
        "per_defect": per_defect,
        "min_items": min_items,
        "judge": judge.identity(),
        "audio_judge": audio_judge.identity() if audio_judge is not None else None,
        "scenarios": dev_set.scenarios,
        "shortfall": dev_set.shortfall,
        "items_short": dev_set.items_short,
        "skipped": plan.skipped,
        "metrics": metrics,
    }
    return CalibrationResult(report, judged)


def _jsonable(value: JSONReadValue) -> JSONValue:
    return json.loads(json.dumps(value, default=str))


def write_results(result: CalibrationResult, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / "calibration.json", _jsonable(result.report))
    lines = [json.dumps(j.to_dict(), default=str, ensure_ascii=False) for j in result.judged]
    write_text_atomic(out_dir / "answers.jsonl", "".join(line + "\n" for line in lines))
