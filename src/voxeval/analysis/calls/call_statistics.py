"""The perturbation, variance and trial-count statistics of one system's live-call scores,
as the three summary entries ``perturbation_effects``, ``variance_components`` and
``ci_width_by_trials`` (see ``docs/live-calls.md``, "Perturbation statistics")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from voxeval.analysis.calls.perturbation_effects import perturbation_effects
from voxeval.analysis.calls.scenario_values import scenario_values
from voxeval.analysis.calls.trial_count import ci_width_by_trials
from voxeval.analysis.calls.variance_components import (
    ESTIMATOR,
    NESTED_ESTIMATOR,
    nested_variance_components,
    variance_components,
)
from voxeval.store.records import ScoreRow

JUDGE_REPEATS_UNAVAILABLE = (
    "not measured: no judged metric was graded more than once per call, so judge noise is "
    "inside the within-scenario component (set scoring.judge_repeats >= 2 to separate it)"
)
REPEATS_KEY = "judge_repeat_values"  # written by scoring.call_judges.judged_call.run_judge


Gradings = dict[str, dict[int, list[float]]]
"""scenario -> trial -> the judge's gradings of that call."""


def _repeat_groups(rows: Iterable[ScoreRow]) -> dict[str, dict[str, Gradings]]:
    """metric -> condition -> scenario -> trial -> the judge's gradings, for the metrics where
    some call was graded at least twice (a call graded once counts with its stored value)."""
    found: dict[str, dict[str, Gradings]] = {}
    repeated: set[str] = set()
    for row in rows:
        if not row.ran:
            continue
        values = row.details.get(REPEATS_KEY)
        gradings = [float(v) for v in values] if isinstance(values, list) and values else []
        if len(gradings) >= 2:
            repeated.add(row.metric)
        per_trial = found.setdefault(row.metric, {}).setdefault(row.condition, {})
        per_trial.setdefault(row.item_id, {})[row.trial] = gradings or [float(row.value)]  # type: ignore[arg-type]
    return {metric: found[metric] for metric in found if metric in repeated}


def variance_summary(rows: Iterable[ScoreRow]) -> dict[str, Any]:
    """Per metric and condition, the scenario and trial variance components, and the judge
    component for the metrics whose calls were graded repeatedly."""
    rows = list(rows)
    data = scenario_values(rows)
    repeated = _repeat_groups(rows)
    by_metric: dict[str, dict[str, Any]] = {}
    for metric in data.metrics:
        if metric in repeated:
            per_condition = {
                condition: nested_variance_components(groups)
                for condition, groups in sorted(repeated[metric].items())
            }
        else:
            per_condition = {
                condition: variance_components(
                    {s: list(t.values()) for s, t in data.get(condition, metric).items()}
                )
                for condition in data.conditions
                if data.get(condition, metric)
            }
        if per_condition:
            by_metric[metric] = per_condition
    judge_repeat: dict[str, Any] = (
        {"available": True, "metrics": sorted(repeated), "estimator": NESTED_ESTIMATOR}
        if repeated
        else {"available": False, "reason": JUDGE_REPEATS_UNAVAILABLE}
    )
    return {"estimator": ESTIMATOR, "judge_repeat": judge_repeat, "by_metric": by_metric}


def trial_count_summary(rows: Iterable[ScoreRow], *, seed: int = 0) -> dict[str, Any]:
    """Per metric and condition, the CI width of the mean for the first k trials."""
    data = scenario_values(rows)
    return {
        metric: {
            condition: ci_width_by_trials(data.get(condition, metric), seed=seed)
            for condition in data.conditions
            if data.get(condition, metric)
        }
        for metric in data.metrics
        if any(data.get(c, metric) for c in data.conditions)
    }


def call_statistics(
    rows: Iterable[ScoreRow], *, seed: int = 0, metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """The three entries for one system's rows; ``metrics`` restricts the metrics (None =
    every metric stored)."""
    rows = [r for r in rows if metrics is None or r.metric in metrics]
    return {
        "perturbation_effects": perturbation_effects(rows, seed=seed),
        "variance_components": variance_summary(rows),
        "ci_width_by_trials": trial_count_summary(rows, seed=seed),
    }
