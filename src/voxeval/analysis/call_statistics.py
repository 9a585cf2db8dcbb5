"""The perturbation, variance and trial-count statistics of one system's live-call scores,
as the three summary entries ``perturbation_effects``, ``variance_components`` and
``ci_width_by_trials`` (see ``docs/live-calls.md``, "Perturbation statistics")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from voxeval.analysis.perturbation_effects import perturbation_effects
from voxeval.analysis.scenario_values import scenario_values
from voxeval.analysis.trial_count import ci_width_by_trials
from voxeval.analysis.variance_components import ESTIMATOR, variance_components
from voxeval.store.records import ScoreRow

JUDGE_REPEATS_UNAVAILABLE = (
    "not available: the store keeps one score per unit and metric, so no metric has "
    "repeated judge scores to separate judge noise from trial noise (it is inside the "
    "within-scenario component)"
)


def variance_summary(rows: Iterable[ScoreRow]) -> dict[str, Any]:
    """Per metric and condition, the scenario and trial variance components."""
    data = scenario_values(rows)
    by_metric: dict[str, dict[str, Any]] = {}
    for metric in data.metrics:
        per_condition = {
            condition: variance_components(
                {s: list(t.values()) for s, t in data.get(condition, metric).items()}
            )
            for condition in data.conditions
            if data.get(condition, metric)
        }
        if per_condition:
            by_metric[metric] = per_condition
    return {
        "estimator": ESTIMATOR,
        "judge_repeat": {"available": False, "reason": JUDGE_REPEATS_UNAVAILABLE},
        "by_metric": by_metric,
    }


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
