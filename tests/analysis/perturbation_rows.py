"""Synthetic live-call score rows for the perturbation statistics tests."""

from __future__ import annotations

import numpy as np

from voxeval.store.records import ScoreRow


def row(
    scenario: str,
    condition: str,
    metric: str,
    value: float | None,
    *,
    trial: int = 0,
    system: str = "sut",
    error: str | None = None,
) -> ScoreRow:
    return ScoreRow(
        item_id=scenario,
        system=system,
        trial=trial,
        condition=condition,
        category="c",
        metric=metric,
        value=value,
        passed=None,
        error=error,
        pending=False,
    )


def simulated_rows(
    rng: np.random.Generator,
    *,
    scenarios: int,
    trials: int,
    effects: dict[str, float],
    metric: str = "turn_taking",
    scenario_sd: float = 1.0,
    trial_sd: float = 0.5,
) -> list[ScoreRow]:
    """Scores of ``scenarios`` scenarios x ``trials`` trials: a scenario effect shared by
    every condition, a fixed shift per condition (``effects``, name -> shift; include
    ``clean``) and independent trial noise."""
    base = rng.normal(0.0, scenario_sd, size=scenarios)
    rows = []
    for condition, shift in effects.items():
        for s in range(scenarios):
            for t in range(trials):
                value = float(base[s] + shift + rng.normal(0.0, trial_sd))
                rows.append(row(f"s{s:03d}", condition, metric, value, trial=t))
    return rows
