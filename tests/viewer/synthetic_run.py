"""A generated run of any size, written through the RunStore API (plan, start, complete,
failures) with seeded synthetic scores, a few artifacts and a summary.json, for the viewer's
pagination tests and its speed benchmark (bench/viewer.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxeval.audio import Audio, write_audio
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent
from voxeval.store import RunStore

SYSTEMS = ("alpha", "beta")
CONDITIONS = ("clean", "street_noise")
CATEGORIES = ("booking", "billing", "records", "triage", "other")
METRICS = ("task_completion", "response_latency", "faithfulness")


@dataclass(frozen=True)
class SyntheticRun:
    path: Path
    units: int
    failed: int  # failed on our side
    pending: int  # never started


def _timeline(rng: np.random.Generator) -> Timeline:
    t, segments = 0.5, []
    for turn in range(3):
        for speaker in ("assistant", "user"):
            length = float(rng.uniform(0.6, 1.2))
            segments.append(SpeakerSegment(speaker, round(t, 2), round(t + length, 2), turn,
                                           f"{speaker} says something {turn}",
                                           f"{speaker} says somethin {turn}"))  # fmt: skip
            t += length + 0.3
    tool = ToolEvent(round(t / 2, 2), 1, "lookup", {"id": "X1"}, {"status": "ok"}, "read")
    return Timeline(segments, [tool], EndEvent(round(t, 2), "user_end_call"))


def synthetic_run(
    folder: Path, units: int, *, seed: int = 0, artifacts_every: int = 50
) -> SyntheticRun:
    """Write a run of ``units`` units in ``folder`` (about 2% failed, 1% never started);
    every ``artifacts_every``-th done unit gets a short call recording and timeline."""
    rng = np.random.default_rng(seed)
    store = RunStore(folder)
    per_item = len(SYSTEMS) * len(CONDITIONS)
    plan = [
        WorkUnit(f"item-{i:05d}", system, 0, condition, CATEGORIES[i % len(CATEGORIES)])
        for i in range(-(-units // per_item))
        for condition in CONDITIONS
        for system in SYSTEMS
    ][:units]
    store.run_yaml.write_provenance(
        {"suite": "synthetic", "seed": seed, "systems": [{"name": s} for s in SYSTEMS]}
    )
    store.units.record_items(plan)
    failed = pending = 0
    sr = 8000
    for n, unit in enumerate(plan):
        draw = rng.random()
        if draw < 0.01:
            pending += 1
            continue
        if draw < 0.03:
            store.recorder.start(unit)
            store.units.finish(
                unit, "failed", "HarnessFault: the judge endpoint timed out", cause="judge"
            )
            failed += 1
            continue
        success = bool(rng.random() < (0.7 if unit.system == "alpha" else 0.55))
        latency = float(rng.gamma(4.0, 0.3))
        faithful = float(rng.integers(1, 4))
        mismatched = {} if success else {"day": 1}
        reasoning = f"The agent kept to the record in turn {n % 4}."
        scores = {
            "task_completion": Score(float(success), success, {"mismatched": mismatched}),
            "response_latency": Score(latency, None, {"turns": 3}),
            "faithfulness": Score(faithful, faithful >= 2, {"reasoning": reasoning}),
        }
        if n % artifacts_every == 0:
            folder_of_unit = store.folder.unit_dir(unit)
            timeline = _timeline(rng)
            length = timeline.end.t if timeline.end else 1.0
            t = np.arange(int(sr * length)) / sr
            wave = (0.2 * np.sin(2 * np.pi * 220 * t) * (rng.random(len(t)) > 0.5)).astype(
                np.float32
            )
            write_audio(Audio(wave, sr), folder_of_unit / "mixed.wav")
            timeline.write_jsonl(folder_of_unit / "events.jsonl")
            diff = (
                {}
                if success
                else {
                    "members": {
                        "records_changed": {"K1": {"day": {"expected": "fri", "actual": "sat"}}}
                    }
                }
            )
            (folder_of_unit / "db_diff.json").write_text(json.dumps({"tables": diff}))
        store.units.complete(unit, scores)
    _write_summary(store, seed)
    store.close()
    return SyntheticRun(folder.resolve(), len(plan), failed, pending)


def _write_summary(store: RunStore, seed: int) -> None:
    """A summary.json in the report's shape: per system, each metric's mean, a normal
    interval and n (the real report needs the suite; this run has none)."""
    systems: dict[str, dict[str, object]] = {}
    for system in SYSTEMS:
        overall = {}
        rows = store.scores.load(system)
        for metric in METRICS:
            values = np.array([r.value for r in rows if r.metric == metric and r.value is not None])
            if len(values) == 0:
                continue
            half = (
                1.96 * float(values.std(ddof=1)) / np.sqrt(len(values)) if len(values) > 1 else 0.0
            )
            mean = float(values.mean())
            overall[metric] = {"mean": mean, "ci_low": mean - half, "ci_high": mean + half,
                               "n": len(values), "method": "normal"}  # fmt: skip
        systems[system] = {"overall": overall, "statistics": {"unit": "item"}, "not_run": {}}
    summary = {"run_id": store.run_id, "suite": {"name": "synthetic", "protocol": "live_call"},
               "seed": seed, "systems": systems}  # fmt: skip
    (store.report_dir / "summary.json").write_text(json.dumps(summary, indent=1))
