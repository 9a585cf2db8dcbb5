"""Score rows of one system regrouped by condition, metric, scenario and trial.

Values are used as stored: a unit whose system under test failed holds its failure value and
counts like any other; a score that did not run (an error or a pending retry) has no value and
is counted per condition and metric instead of being averaged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from voxeval.store.records import ScoreRow

ByScenario = dict[str, dict[int, float]]
"""scenario id -> trial -> value."""


@dataclass
class ScenarioValues:
    """``values[condition][metric][scenario][trial]`` and ``not_run[condition][metric]``."""

    values: dict[str, dict[str, ByScenario]] = field(default_factory=dict)
    not_run: dict[str, dict[str, int]] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=list)  # in first-seen order

    def get(self, condition: str, metric: str) -> ByScenario:
        return self.values.get(condition, {}).get(metric, {})

    def not_run_count(self, condition: str, metric: str) -> int:
        return self.not_run.get(condition, {}).get(metric, 0)

    @property
    def conditions(self) -> list[str]:
        return sorted(set(self.values) | set(self.not_run))


def scenario_values(rows: Iterable[ScoreRow]) -> ScenarioValues:
    values: dict[str, dict[str, ByScenario]] = defaultdict(lambda: defaultdict(dict))
    not_run: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    metrics: dict[str, None] = {}
    for row in rows:
        metrics.setdefault(row.metric, None)
        if row.ran:
            per_scenario = values[row.condition][row.metric].setdefault(row.item_id, {})
            per_scenario[row.trial] = float(row.value)  # type: ignore[arg-type]
        else:
            not_run[row.condition][row.metric] += 1
    return ScenarioValues(
        values={c: dict(m) for c, m in values.items()},
        not_run={c: dict(m) for c, m in not_run.items()},
        metrics=list(metrics),
    )


def scenario_means(by_scenario: ByScenario) -> dict[str, float]:
    """Mean over each scenario's trials (scenarios without a value left out); ``fsum`` keeps
    equal values in any order giving equal means (so a zero delta is exactly zero)."""
    return {s: math.fsum(t.values()) / len(t) for s, t in by_scenario.items() if t}
