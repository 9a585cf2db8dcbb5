"""Compare two or more runs of the same suite: per system and metric, each run's mean with its
interval, per-item deltas against the baseline run, a paired test over the independent unit
and regression / improvement flags.

For every system in several runs, its *baseline* is the first run (in the order given) that
holds it; every later run holding it is compared with that baseline:

- **each run's mean** with its 95% interval is computed as the run's own summary computes it
  (``RunSource.overall``): same clusters, Wilson intervals for pass/fail rates, the run seed;
- **per-item deltas** (``paired_items``): per (item, condition), the later run's mean over
  trials minus the baseline's, for cells scored in both runs; the rest are listed as unpaired
  with the reason (a unit that failed on voxeval's side is excluded, as from the run's means,
  but never silently); a unit whose system under test failed holds its failure value;
- **the paired test** resamples the independent unit (the query, scenario or dialogue): the
  deltas of a unit's cells are averaged into one delta per unit, the mean delta gets a
  cluster-bootstrap interval (``metric_stats``) and the two-sided sign-flip permutation test
  (``sign_flip_test``: exact up to 13 units, seeded Monte Carlo above) gives the p-value;
- **Holm** adjusts the p-values over the metrics compared for one system and one later run
  (``holm_adjust``); an adjusted p below alpha in the metric's bad direction
  (``metric_direction``) is a ``regression``, in its good direction an ``improvement``;
  a significant change of a descriptive metric (asked for with ``metrics``) is ``changed``.

Without ``metrics``, every metric with a better direction that has values in two of the
system's runs is compared. Everything is seeded by the baseline run's seed, system, metric
and run, so the same runs give the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from voxeval.analysis.bootstrap import Stat, metric_stats
from voxeval.analysis.calls.perturbation_effects import ALPHA, derived_seed, holm_adjust
from voxeval.analysis.sign_flip import EXACT_MAX_UNITS, MONTE_CARLO_RESAMPLES, sign_flip_test
from voxeval.errors import ConfigError, VoxevalError
from voxeval.report.paired_items import SideValues, pair_items, side_values
from voxeval.report.run_source import RunSource, check_same_suite, open_run_source
from voxeval.scoring.metric_direction import metric_direction
from voxeval.store import ScoreRow
from voxeval.store.records import UnitRecord

TEST_NAME = "paired sign-flip permutation test over the independent unit, two-sided"
CORRECTION = "holm (over the metrics of one system and one run against its baseline)"
REGRESSION, IMPROVEMENT, CHANGED = "regression", "improvement", "changed"


def direction_of(metric: str) -> str | None:
    """``"higher"``/``"lower"``, or None for a descriptive or unknown metric."""
    try:
        return metric_direction(metric)
    except VoxevalError:  # a plugin metric that is not installed here
        return None


def flag_for(better: str | None, delta: float | None, significant: bool) -> str | None:
    """``regression`` / ``improvement`` where the adjusted test is significant (``changed``
    for a metric without a better direction), else None."""
    if not significant or delta is None or delta == 0:
        return None
    if better is None:
        return CHANGED
    good = delta > 0 if better == "higher" else delta < 0
    return IMPROVEMENT if good else REGRESSION


@dataclass(frozen=True)
class RunComparison:
    """The result of ``compare_runs``, free of any presentation (``to_dict`` is the schema of
    ``comparison.json``)."""

    suite: dict[str, Any]
    runs: list[dict[str, Any]]
    systems: dict[str, dict[str, Any]]
    metrics: list[str] | None = None
    alpha: float = ALPHA
    warnings: list[str] = field(default_factory=list)
    not_compared_systems: dict[str, str] = field(default_factory=dict)

    def flags(self) -> list[dict[str, Any]]:
        """Every flagged (system, metric, run) in order: regressions, improvements, changes."""
        out = []
        for system, entry in self.systems.items():
            for metric, m in entry["metrics"].items():
                for c in m["comparisons"]:
                    if c["flag"]:
                        out.append({"system": system, "metric": metric, **_flag_entry(c)})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "runs": self.runs,
            "baseline": self.runs[0]["run_id"] if self.runs else None,
            "metrics": self.metrics,
            "alpha": self.alpha,
            "test": TEST_NAME,
            "correction": CORRECTION,
            "exact_max_units": EXACT_MAX_UNITS,
            "monte_carlo_resamples": MONTE_CARLO_RESAMPLES,
            "warnings": self.warnings,
            "systems": self.systems,
            "not_compared_systems": self.not_compared_systems,
            "flags": self.flags(),
        }


def _flag_entry(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": c["run"],
        "baseline": c["baseline"],
        "flag": c["flag"],
        "delta": c["delta"]["mean"],
        "p_holm": c["p_holm"],
    }


@dataclass
class _Loaded:
    source: RunSource
    rows: list[ScoreRow]
    units: list[UnitRecord]
    systems: list[str]

    @property
    def run_id(self) -> str:
        return self.source.run_id

    @cached_property
    def _by_system_metric(self) -> dict[tuple[str, str], list[ScoreRow]]:
        grouped: dict[tuple[str, str], list[ScoreRow]] = defaultdict(list)
        for row in self.rows:
            grouped[(row.system, row.metric)].append(row)
        return dict(grouped)

    @cached_property
    def _units_by_system(self) -> dict[str, list[UnitRecord]]:
        grouped: dict[str, list[UnitRecord]] = defaultdict(list)
        for unit in self.units:
            grouped[unit.system].append(unit)
        return dict(grouped)

    def side(self, system: str, metric: str) -> SideValues:
        rows = self._by_system_metric.get((system, metric), [])
        return side_values(rows, self._units_by_system.get(system, []), system, metric)

    def metrics_with_values(self, system: str) -> list[str]:
        return [
            metric
            for (name, metric), rows in self._by_system_metric.items()
            if name == system and any(r.ran for r in rows)
        ]


def _candidate_metrics(holders: list[_Loaded], system: str, asked: list[str] | None) -> list[str]:
    if asked is not None:
        return list(asked)
    counts: dict[str, int] = {}
    for run in holders:
        for metric in run.metrics_with_values(system):
            counts[metric] = counts.get(metric, 0) + 1
    return sorted(m for m, n in counts.items() if n >= 2 and direction_of(m) is not None)


def _compare_pair(base: _Loaded, other: _Loaded, system: str, metric: str) -> dict[str, Any]:
    cluster_of = base.source.cluster_of
    paired = pair_items(
        base.side(system, metric),
        other.side(system, metric),
        cluster_of,
        (base.run_id, other.run_id),
    )
    seed = derived_seed(base.source.seed, system, metric, other.run_id)
    deltas = list(paired.cluster_deltas.values())
    entry: dict[str, Any] = {
        "run": other.run_id,
        "baseline": base.run_id,
        "delta": metric_stats(deltas, seed=seed),  # one value per independent unit
        "paired_items": len(paired.items),
        "paired_clusters": len(deltas),
        "unpaired": paired.unpaired_counts(),
        "items": paired.items,
        "unpaired_items": paired.unpaired,
        "p_value": None,
        "test": None,
        "assignments": None,
        "p_holm": None,
        "significant": False,
        "flag": None,
    }
    if deltas:
        test = sign_flip_test(deltas, seed=seed)
        entry.update(p_value=test["p_value"], test=test["method"], assignments=test["assignments"])
    else:
        entry["note"] = "no item was scored in both runs"
    return entry


def _adjust(entries: list[tuple[str | None, dict[str, Any]]], alpha: float) -> None:
    """Holm over one family (the metrics of one system and run); sets the flags."""
    tested = [(better, e) for better, e in entries if e["p_value"] is not None]
    adjusted, significant = holm_adjust([e["p_value"] for _, e in tested], alpha)
    for (better, e), p_holm, sig in zip(tested, adjusted, significant, strict=True):
        e["p_holm"], e["significant"] = p_holm, sig
        e["flag"] = flag_for(better, e["delta"]["mean"], sig)


def _system_entry(
    system: str, holders: list[_Loaded], asked: list[str] | None, alpha: float,
    overall: dict[str, dict[str, dict[str, Stat]]],
) -> dict[str, Any]:  # fmt: skip
    base = holders[0]
    metrics: dict[str, Any] = {}
    not_compared: dict[str, str] = {}
    families: dict[str, list[tuple[str | None, dict[str, Any]]]] = {}
    for metric in _candidate_metrics(holders, system, asked):
        with_values = [r.run_id for r in holders if metric in r.metrics_with_values(system)]
        if len(with_values) < 2:
            where = ", ".join(with_values) or "no run"
            not_compared[metric] = f"scores with a value in {where} only"
            continue
        better = direction_of(metric)
        comparisons = []
        for other in holders[1:]:
            entry = _compare_pair(base, other, system, metric)
            families.setdefault(other.run_id, []).append((better, entry))
            comparisons.append(entry)
        metrics[metric] = {
            "better": better,
            "runs": {r.run_id: overall[r.run_id].get(system, {}).get(metric) for r in holders},
            "comparisons": comparisons,
        }
    for family in families.values():
        _adjust(family, alpha)
    return {
        "baseline": base.run_id,
        "runs": [r.run_id for r in holders],
        "units": {r.run_id: r.source.store.units.status_counts().get(system, {}) for r in holders},
        "metrics": metrics,
        "not_compared": not_compared,
    }


def compare_runs(
    run_dirs: Sequence[Path | str],
    *,
    metrics: Sequence[str] | None = None,
    alpha: float = ALPHA,
) -> RunComparison:
    """Compare the runs in ``run_dirs`` (the first is the baseline); see the module doc.
    Raises ``ConfigError`` for fewer than two runs, a folder that is not a run, the same run
    twice, or runs of different suites or protocols."""
    if len(run_dirs) < 2:
        raise ConfigError("compare: give at least two run folders")
    asked = list(dict.fromkeys(metrics)) if metrics else None
    sources = [open_run_source(p) for p in run_dirs]
    warnings = check_same_suite(sources)
    loaded = [_Loaded(s, s.rows(), s.units(), s.systems()) for s in sources]
    all_systems = list(dict.fromkeys(name for run in loaded for name in run.systems))
    holders = {name: [r for r in loaded if name in r.systems] for name in all_systems}
    wanted: set[str] = set()
    for name, runs in holders.items():
        if len(runs) >= 2:
            wanted.update(_candidate_metrics(runs, name, asked))
    overall = {r.run_id: r.source.overall(sorted(wanted), r.rows) for r in loaded}
    systems: dict[str, dict[str, Any]] = {}
    not_compared_systems: dict[str, str] = {}
    for name, runs in holders.items():
        if len(runs) < 2:
            not_compared_systems[name] = f"only in run {runs[0].run_id}"
            continue
        systems[name] = _system_entry(name, runs, asked, alpha, overall)
    first = sources[0]
    return RunComparison(
        suite={"name": first.suite.name, "protocol": first.protocol, "unit": first.cluster_unit},
        runs=[{**s.provenance(), "path": str(s.path)} for s in sources],
        systems=systems,
        metrics=asked,
        alpha=alpha,
        warnings=warnings,
        not_compared_systems=not_compared_systems,
    )
