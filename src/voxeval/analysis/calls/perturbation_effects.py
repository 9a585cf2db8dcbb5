"""Effect of each perturbation condition on each metric, paired by scenario.

For a system, a metric and a condition other than the baseline (``clean``): each scenario's
mean over its trials in the condition minus its mean in the baseline, over the scenarios
scored in both. Reported: the mean of those deltas with a bootstrap CI over scenarios, the
two-sided paired sign-flip permutation p-value (``analysis.sign_flip``), and the Holm-adjusted
p-value across the conditions of that system and metric (``statsmodels`` ``multipletests``);
``significant`` = adjusted p < alpha. Scores that did not run are left out and counted.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

import numpy as np
from statsmodels.stats.multitest import multipletests

from voxeval.analysis.bootstrap import DEFAULT_RESAMPLES, metric_stats
from voxeval.analysis.calls.scenario_values import ScenarioValues, scenario_means, scenario_values
from voxeval.analysis.sign_flip import EXACT_MAX_UNITS, MONTE_CARLO_RESAMPLES, sign_flip_test
from voxeval.store.records import ScoreRow

BASELINE = "clean"
ALPHA = 0.05
PRIMARY_METRICS = ("task_completion", "turn_taking")
TEST_NAME = "paired sign-flip permutation test, two-sided"
CORRECTION = "holm"


def derived_seed(seed: int, *parts: str) -> int:
    """A seed for one (condition, metric) test that does not depend on the order of tests."""
    salt = zlib.crc32("\0".join(parts).encode("utf-8"))
    return int(np.random.default_rng([seed, salt]).integers(2**31))


def condition_effect(
    baseline: dict[str, float], perturbed: dict[str, float], *, seed: int
) -> dict[str, Any] | None:
    """Delta stat and permutation p-value from per-scenario means; None without a scenario
    in common."""
    common = sorted(set(baseline) & set(perturbed))
    if not common:
        return None
    deltas = [perturbed[s] - baseline[s] for s in common]
    test = sign_flip_test(deltas, seed=seed)
    return {
        "delta": metric_stats(deltas, seed=seed),  # every scenario is its own unit
        "p_value": test["p_value"],
        "test": test["method"],
        "assignments": test["assignments"],
        "scenarios": len(common),
    }


def holm_adjust(p_values: list[float], alpha: float = ALPHA) -> tuple[list[float], list[bool]]:
    """Holm–Bonferroni adjusted p-values (statsmodels) and ``significant`` = adjusted p below
    alpha (strictly, as EVA-Bench states it; statsmodels' own ``reject`` also accepts p equal
    to alpha)."""
    if not p_values:
        return [], []
    if len(p_values) == 1:
        # Holm leaves a single p-value as it is; statsmodels' holm branch runs gc.collect()
        # (about 0.3 s in a large process), so the common one-condition run skips the call.
        adjusted = [float(p_values[0])]
    else:
        _, corrected, _, _ = multipletests(p_values, alpha=alpha, method=CORRECTION)
        adjusted = [float(p) for p in corrected]
    return adjusted, [p < alpha for p in adjusted]


def _effects_for_metric(
    data: ScenarioValues,
    metric: str,
    baseline: str,
    conditions: list[str],
    seed: int,
    alpha: float,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    effects: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    base = scenario_means(data.get(baseline, metric))
    for condition in conditions:
        other = scenario_means(data.get(condition, metric))
        not_run = {
            baseline: data.not_run_count(baseline, metric),
            condition: data.not_run_count(condition, metric),
        }
        if not base or not other:
            where = baseline if not base else condition
            reason = f"no scores with a value in {where!r}"
            skipped.append({"condition": condition, "metric": metric, "reason": reason})
            continue
        effect = condition_effect(base, other, seed=derived_seed(seed, condition, metric))
        if effect is None:
            reason = f"no scenario has values in both {baseline!r} and {condition!r}"
            skipped.append({"condition": condition, "metric": metric, "reason": reason})
            continue
        unpaired = len(set(base) ^ set(other))
        effects.append(
            {"condition": condition, "metric": metric, **effect,
             "unpaired_scenarios": unpaired, "not_run": not_run}
        )  # fmt: skip
    adjusted, significant = holm_adjust([e["p_value"] for e in effects], alpha)
    for effect, p_holm, sig in zip(effects, adjusted, significant, strict=True):
        effect["p_holm"] = p_holm
        effect["significant"] = sig
    return effects, skipped


def perturbation_effects(
    rows: Iterable[ScoreRow], *, seed: int = 0, baseline: str = BASELINE, alpha: float = ALPHA
) -> dict[str, Any]:
    """The effects table of one system's score rows (see the module doc)."""
    data = scenario_values(rows)
    out: dict[str, Any] = {
        "baseline": baseline,
        "alpha": alpha,
        "test": TEST_NAME,
        "correction": CORRECTION,
        "exact_max_scenarios": EXACT_MAX_UNITS,
        "monte_carlo_resamples": MONTE_CARLO_RESAMPLES,
        "bootstrap_resamples": DEFAULT_RESAMPLES,
        "seed": seed,
        "effects": [],
        "not_compared": [],
    }
    conditions = [c for c in data.conditions if c != baseline]
    if not conditions:
        return {**out, "note": "no perturbation condition in this run"}
    if baseline not in data.conditions:
        return {**out, "note": f"no {baseline!r} condition to compare against"}
    metrics = list(dict.fromkeys([*PRIMARY_METRICS, *data.metrics]))
    for metric in metrics:
        if metric not in data.metrics and metric in PRIMARY_METRICS:
            reason = "no scores stored for this metric"
            out["not_compared"].append({"condition": "*", "metric": metric, "reason": reason})
            continue
        effects, skipped = _effects_for_metric(data, metric, baseline, conditions, seed, alpha)
        out["effects"] += effects
        out["not_compared"] += skipped
    return out
