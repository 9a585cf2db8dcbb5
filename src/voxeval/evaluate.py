"""Running an evaluation from Python: what ``voxeval run``, ``validate`` and ``score`` do,
as functions (re-exported by ``voxeval``: ``from voxeval import run_evaluation``).

    from voxeval import load_config, run_evaluation
    result = run_evaluation(load_config("run.yaml"), "runs/mine", limit=2)
    result.summary["systems"]["mine"]["overall"]["checklist"]["mean"]
    result.complete  # every unit ran and every score and comparison is in
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from voxeval.benchmarks.suite_info import SuiteInfo
from voxeval.config import RunConfig, load_run_config, parse_run_config
from voxeval.json_types import JSONObject, JSONValue
from voxeval.runner import RetryPolicy, RunHealth, run_health
from voxeval.runner import rescore as rescore_run
from voxeval.runner import run_evaluation as run_units
from voxeval.runner.faults import DEFAULT_RETRY
from voxeval.runner.plan_check import validate_plan
from voxeval.store import RunStore

ConfigSource = RunConfig | Mapping[str, JSONValue] | str | Path


@dataclass(frozen=True)
class EvaluationResult:
    """A finished (or partly finished) run: its folder, ``report/summary.json`` and whether
    everything was scored (``health``: failed units, system faults, pending scores)."""

    run_dir: Path
    summary: dict[str, Any]
    health: RunHealth

    @property
    def complete(self) -> bool:
        """Every unit ran and every score and comparison is in (system faults are results)."""
        health = self.health
        return not (health.failed_units or health.pending_scores or health.incomplete_comparisons)

    def overall(self, system: str) -> JSONObject:
        """``{metric: {"mean", "ci_low", "ci_high", "n"}}`` of one system."""
        return dict(self.summary["systems"][system]["overall"])


def load_config(path: str | Path, overrides: Mapping[str, JSONValue] | None = None) -> RunConfig:
    """Read a run config YAML (relative paths resolved against its folder); ``overrides``
    replace top-level fields, as the command line's flags do."""
    return load_run_config(path, dict(overrides) if overrides else None)


def _config(config: ConfigSource) -> RunConfig:
    if isinstance(config, RunConfig):
        return config
    if isinstance(config, str | Path):
        return load_config(config)
    return parse_run_config(dict(config), "<config>")


def validate(config: ConfigSource) -> SuiteInfo | None:
    """Check a run config completely without running anything; ``ConfigError`` lists every
    problem. Returns the suite it names (None when it cannot be read)."""
    return validate_plan(_config(config))


def _result(run_dir: Path) -> EvaluationResult:
    summary = json.loads((run_dir / "report" / "summary.json").read_text(encoding="utf-8"))
    store = RunStore(run_dir)
    try:
        health = run_health(store)
    finally:
        store.close()
    return EvaluationResult(run_dir=run_dir, summary=summary, health=health)


def run_evaluation(
    config: ConfigSource,
    out_dir: str | Path,
    *,
    limit: int | None = None,
    resume: bool = True,
    retry: RetryPolicy = DEFAULT_RETRY,
    console: Console | None = None,
) -> EvaluationResult:
    """Evaluate the config's systems on its suite into ``out_dir`` (``voxeval run``): a
    ``RunConfig``, a config file or a mapping of its fields. Resumes an interrupted run unless
    ``resume=False``; ``limit`` keeps the first N items. Progress goes to ``console``
    (default: standard error)."""
    run_dir = run_units(
        _config(config), out_dir, limit=limit, resume=resume, retry=retry, console=console
    )
    return _result(Path(run_dir))


def rescore(
    run_dir: str | Path,
    metrics: list[str] | None = None,
    *,
    overrides: Mapping[str, JSONValue] | None = None,
    console: Console | None = None,
) -> EvaluationResult:
    """Score a run's finished units again from their stored artifacts (``voxeval score``):
    the systems are never called; ``overrides`` replace config fields (e.g. a new judge)."""
    done = rescore_run(
        run_dir, metrics, console=console, overrides=dict(overrides) if overrides else None
    )
    return _result(Path(done))
