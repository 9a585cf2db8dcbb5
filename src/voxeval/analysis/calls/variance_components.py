"""How much of a metric's variance lies between scenarios and how much between the trials of
one scenario: the one-way random-effects ANOVA method-of-moments estimator.

Model: value = overall mean + scenario effect (variance ``between``) + trial noise (variance
``within``). With a groups (scenarios), n_i values in group i and N values in all::

    MS_between = sum n_i (mean_i - mean)^2 / (a - 1)
    MS_within  = sum (value - mean_i)^2 / (N - a)
    n0         = (N - sum n_i^2 / N) / (a - 1)        # the effective group size (unbalanced)
    within     = MS_within
    between    = max(0, (MS_between - MS_within) / n0)

A negative moment estimate of ``between`` is truncated at 0 (and ``truncated`` says so).
``scenario_share`` = between / (between + within), the intraclass correlation: near 1 means
more scenarios narrow the interval far more than more trials do.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TypedDict

ESTIMATOR = "one-way random-effects ANOVA, method of moments"

NOTE_TOO_FEW_SCENARIOS = "fewer than two scenarios with a value"
NOTE_NO_REPEATS = "no scenario has two or more trials with a value"
NOTE_NO_VARIANCE = "all values equal"


class VarianceComponents(TypedDict, total=False):
    """The components (None without enough data, ``note`` saying why) and what they are
    over; the judge-repeat fields only from ``nested_variance_components``."""

    scenarios: int
    n: int
    estimator: str
    between_scenarios: float | None
    within_scenario: float | None
    scenario_share: float | None
    note: str
    truncated: bool
    effective_trials: float
    calls: int
    judge_repeat: float | None
    gradings_per_call: float
    trial_truncated: bool
    trial_share: float | None
    judge_share: float | None


def variance_components(groups: Mapping[Hashable, Sequence[float]]) -> VarianceComponents:
    """Variance between groups (scenarios) and within them (trials) for ``groups``
    (group key -> its values). Without enough data the components are None and ``note``
    says why."""
    kept = {k: [float(v) for v in vals] for k, vals in groups.items() if vals}
    a = len(kept)
    n_total = sum(len(v) for v in kept.values())
    out: VarianceComponents = {
        "scenarios": a,
        "n": n_total,
        "estimator": ESTIMATOR,
        "between_scenarios": None,
        "within_scenario": None,
        "scenario_share": None,
    }
    if a < 2:
        return {**out, "note": NOTE_TOO_FEW_SCENARIOS}
    if n_total <= a:
        return {**out, "note": NOTE_NO_REPEATS}
    means = {k: math.fsum(v) / len(v) for k, v in kept.items()}
    grand = math.fsum(x for v in kept.values() for x in v) / n_total
    ss_between = math.fsum(len(v) * (means[k] - grand) ** 2 for k, v in kept.items())
    ss_within = math.fsum((x - means[k]) ** 2 for k, v in kept.items() for x in v)
    ms_between = ss_between / (a - 1)
    ms_within = ss_within / (n_total - a)
    n0 = (n_total - math.fsum(len(v) ** 2 for v in kept.values()) / n_total) / (a - 1)
    raw_between = (ms_between - ms_within) / n0
    between = max(0.0, raw_between)
    total = between + ms_within
    if total == 0:
        out["note"] = NOTE_NO_VARIANCE
    return {
        **out,
        "between_scenarios": between,
        "within_scenario": ms_within,
        "scenario_share": between / total if total > 0 else None,
        "truncated": raw_between < 0,
        "effective_trials": n0,
    }


NESTED_ESTIMATOR = (
    "nested method of moments: pooled within-call variance of the judge repeats, then the "
    "one-way ANOVA over the calls' mean gradings"
)
NOTE_NO_JUDGE_REPEATS = "no call has two or more judge gradings"


def nested_variance_components(
    groups: Mapping[str, Mapping[int, Sequence[float]]],
) -> VarianceComponents:
    """Scenario, trial and judge-repeat variance for ``groups`` (scenario -> trial -> the
    values of the judge's repeated gradings of that call).

    judge    = pooled within-call variance of the gradings: sum (x - call mean)^2 / sum (r - 1)
    The calls' mean gradings then go through ``variance_components``: its ``between`` is the
    scenario component; its ``within`` holds trial variance plus judge variance / r, so
    trial = max(0, within - judge / r_h), with r_h the harmonic mean of gradings per call
    (exact when every call has the same number). Shares are each component over their sum."""
    cells = {
        (s, t): [float(v) for v in vals]
        for s, trials in groups.items()
        for t, vals in trials.items()
        if vals
    }
    df_judge = sum(len(v) - 1 for v in cells.values())
    if df_judge == 0:
        return {
            "scenarios": len({s for s, _t in cells}),
            "n": len(cells),
            "estimator": NESTED_ESTIMATOR,
            "between_scenarios": None,
            "within_scenario": None,
            "judge_repeat": None,
            "scenario_share": None,
            "note": NOTE_NO_JUDGE_REPEATS,
        }
    ss_judge = math.fsum((x - math.fsum(v) / len(v)) ** 2 for v in cells.values() for x in v)
    judge = ss_judge / df_judge
    means: dict[Hashable, list[float]] = {}
    for (s, _t), vals in cells.items():
        means.setdefault(s, []).append(math.fsum(vals) / len(vals))
    calls = variance_components(means)
    r_h = len(cells) / math.fsum(1 / len(v) for v in cells.values())
    out: VarianceComponents = {
        **calls,
        "estimator": NESTED_ESTIMATOR,
        "n": sum(len(v) for v in cells.values()),
        "calls": len(cells),
        "judge_repeat": judge,
        "gradings_per_call": r_h,
    }
    within, between = calls["within_scenario"], calls["between_scenarios"]
    if within is None or between is None:  # both None together (too little data)
        return out
    raw_trial = within - judge / r_h
    trial = max(0.0, raw_trial)
    total = between + trial + judge
    result: VarianceComponents = {
        **out,
        "within_scenario": trial,
        "trial_truncated": raw_trial < 0,
    }
    # scenario_share keeps its place in out; the other two shares follow
    result["scenario_share"] = between / total if total > 0 else None
    result["trial_share"] = trial / total if total > 0 else None
    result["judge_share"] = judge / total if total > 0 else None
    return result
