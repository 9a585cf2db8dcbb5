"""The summary entry of each EVA composite for one system: per condition, pass@1 and the whole
pass@k / pass^k curves with bootstrap CIs over scenarios, or, when the composite cannot be
claimed there, which component is missing on how many trials and why.

A composite is claimed for a condition only when every planned trial there was scored and
every component ran on it (a system-fault trial counts as a failed trial). Anything less
would be a composite over a different design than the one planned, so no number is given
for that condition; the top-level ``claimed`` is true only when every condition is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TypedDict

from voxeval.analysis.bootstrap import Stat
from voxeval.analysis.calls.eva_composites import (
    COMPOSITES,
    Composite,
    TrialScores,
    Verdict,
    collect_trials,
    judge_trial,
)
from voxeval.analysis.passk import passk_summary
from voxeval.store.records import ScoreRow, UnitRecord

NOT_SCORED_NOTE = (
    "planned trials without scores (failed on our side or not run yet): the design is "
    "incomplete, so the composite is not claimed for their conditions"
)


class Tally(TypedDict):
    """Trials a part did not run on, and how many for each reason (most common first)."""

    trials: int
    reasons: dict[str, int]


class ConditionEntry(TypedDict):
    """One condition of a composite (``condition_summary``)."""

    claimed: bool
    trials: int
    n_scenarios: int
    n_trials: int
    passed_trials: int | None
    system_fault_trials: int
    pass_at_1: Stat | None
    pass_at_k: list[Stat]
    pass_hat_k: list[Stat]
    missing: dict[str, Tally]
    not_scored: Tally


class ComponentEntry(TypedDict):
    metric: str
    rule: str
    threshold: float


class NotScored(TypedDict, total=False):
    """The planned trials without scores, with a note; empty when every trial was scored."""

    trials: int
    reasons: dict[str, int]
    note: str


class CompositeEntry(TypedDict, total=False):
    """A composite's summary for one system (``composite_entry``); ``note`` and ``reason``
    only when there is one."""

    label: str
    definition: str
    components: list[ComponentEntry]
    claimed: bool
    missing: dict[str, Tally]
    not_scored: NotScored
    by_condition: dict[str, ConditionEntry]
    note: str
    reason: str


def _tally(reasons: Iterable[str]) -> Tally:
    counts = Counter(reasons)
    return {"trials": sum(counts.values()), "reasons": dict(counts.most_common())}


def _missing(verdicts: Sequence[Verdict]) -> dict[str, Tally]:
    """Per component metric that did not run: on how many trials, and why."""
    per_metric: dict[str, list[str]] = {}
    for verdict in verdicts:
        for metric, reason in verdict.missing.items():
            per_metric.setdefault(metric, []).append(reason)
    return {metric: _tally(reasons) for metric, reasons in per_metric.items()}


def _not_scored(verdicts: Sequence[Verdict]) -> Tally:
    return _tally(v.not_scored for v in verdicts if v.not_scored is not None)


def condition_summary(
    composite: Composite, trials: Sequence[TrialScores], *, seed: int = 0
) -> ConditionEntry:
    """One condition's entry: the curves when claimed, else ``None``/empty numbers and why."""
    verdicts = [judge_trial(composite, trial) for trial in trials]
    claimed = bool(verdicts) and all(v.passed is not None for v in verdicts)
    planned = Counter(t.scenario for t in trials)
    entry: ConditionEntry = {
        "claimed": claimed,
        "trials": len(verdicts),
        "n_scenarios": len(planned),
        "n_trials": min(planned.values(), default=0),  # trials per scenario (the largest k)
        "passed_trials": sum(1 for v in verdicts if v.passed) if claimed else None,
        "system_fault_trials": sum(1 for v in verdicts if v.system_fault),
        "pass_at_1": None,
        "pass_at_k": [],
        "pass_hat_k": [],
        "missing": _missing(verdicts),
        "not_scored": _not_scored(verdicts),
    }
    if not claimed:
        return entry
    per_scenario: dict[str, list[bool]] = {}
    for trial, verdict in zip(trials, verdicts, strict=True):
        per_scenario.setdefault(trial.scenario, []).append(bool(verdict.passed))
    curves = passk_summary(per_scenario, seed=seed)
    at_k = curves["pass_at_k"]
    entry["pass_at_1"] = at_k[0] if at_k else None  # the mean pass rate over scenarios
    entry["pass_at_k"] = at_k
    entry["pass_hat_k"] = curves["pass_hat_k"]
    entry["n_scenarios"] = curves["n_scenarios"]
    entry["n_trials"] = curves["n_trials"]
    return entry


def _merge(per_condition: Iterable[Tally]) -> Tally:
    """Sum ``{"trials": n, "reasons": {reason: n}}`` tallies over conditions."""
    reasons: Counter[str] = Counter()
    for tally in per_condition:
        reasons.update(tally.get("reasons") or {})
    return {"trials": sum(reasons.values()), "reasons": dict(reasons.most_common())}


def composite_entry(
    composite: Composite, trials: Sequence[TrialScores], *, seed: int = 0
) -> CompositeEntry:
    """A composite's summary for one system (see the module docstring)."""
    conditions: dict[str, list[TrialScores]] = {}
    for trial in trials:
        conditions.setdefault(trial.condition, []).append(trial)
    by_condition = {
        condition: condition_summary(composite, group, seed=seed)
        for condition, group in conditions.items()
    }
    missing_metrics = list(dict.fromkeys(m for c in by_condition.values() for m in c["missing"]))
    missing = {
        metric: _merge(
            c["missing"][metric] for c in by_condition.values() if metric in c["missing"]
        )
        for metric in missing_metrics
    }
    not_scored = _merge(c["not_scored"] for c in by_condition.values())
    entry: CompositeEntry = {
        "label": composite.label,
        "definition": composite.definition,
        "components": [
            {"metric": c.metric, "rule": c.rule, "threshold": c.threshold}
            for c in composite.components
        ],
        "claimed": bool(by_condition) and all(c["claimed"] for c in by_condition.values()),
        "missing": missing,
        "not_scored": {**not_scored, "note": NOT_SCORED_NOTE} if not_scored["trials"] else {},
        "by_condition": by_condition,
    }
    if composite.note:
        entry["note"] = composite.note
    if not by_condition:
        entry["reason"] = "no trials of this system"
    return entry


def eva_composites(
    rows: Iterable[ScoreRow],
    units: Sequence[UnitRecord] | None = None,
    *,
    seed: int = 0,
    composites: Sequence[Composite] = COMPOSITES,
) -> dict[str, CompositeEntry]:
    """``{composite name: entry}`` for one system's score rows and planned units (units
    tell the trials that have no scores; without them only scored trials are known)."""
    trials = collect_trials(rows, units)
    return {c.name: composite_entry(c, trials, seed=seed) for c in composites}
