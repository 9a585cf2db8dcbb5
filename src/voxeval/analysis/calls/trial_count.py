"""How the confidence interval narrows with the number of trials per scenario.

For k = 1 .. the largest number of trials any scenario has, only each scenario's first k
trials (lowest trial numbers) are kept and the cluster-bootstrap interval of the mean over
scenarios is computed (``metric_stats``, seeded). The width ``ci_high - ci_low`` lets a user
see whether another trial per scenario is worth its cost: once the width stops shrinking, the
spread between scenarios dominates and only more scenarios help.
"""

from __future__ import annotations

from typing import Any

from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.calls.scenario_values import ByScenario


def ci_width_by_trials(by_scenario: ByScenario, *, seed: int = 0) -> list[dict[str, Any]]:
    """One entry per k: ``{"k", "width", "mean", "ci_low", "ci_high", "n", "clusters"}``
    (``width`` None, with ``ci_note``, when the first k trials give no interval)."""
    ordered = {s: [t[i] for i in sorted(t)] for s, t in sorted(by_scenario.items()) if t}
    most = max((len(v) for v in ordered.values()), default=0)
    curve = []
    for k in range(1, most + 1):
        values = [v for vals in ordered.values() for v in vals[:k]]
        keys = [s for s, vals in ordered.items() for _ in vals[:k]]
        stat = metric_stats(values, clusters=keys, seed=seed)
        low, high = stat.get("ci_low"), stat.get("ci_high")
        width = None if low is None or high is None else high - low
        curve.append({"k": k, "width": width, **stat})
    return curve
