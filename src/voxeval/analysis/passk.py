"""pass@k and pass^k over repeated trials (PROTOCOLS.md section 3).

With n trials and c passes for a scenario:
pass@k = 1 - C(n-c, k) / C(n, k)   (at least one of k sampled trials passes)
pass^k = C(c, k) / C(n, k)         (all k sampled trials pass)
Both are computed exactly with integer binomials, per scenario, then averaged over scenarios
with a bootstrap CI over scenarios (2,000 seeded resamples, as in the reference): the scenario
is the independent unit, so each contributes one value however many trials it has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TypedDict

from scipy.special import comb

from voxeval.analysis.bootstrap import DEFAULT_RESAMPLES, Stat, metric_stats


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def _exact_comb(n: int, k: int) -> int:
    return int(comb(n, k, exact=True))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn without replacement passed."""
    _check(n, c, k)
    return float(1 - Fraction(_exact_comb(n - c, k), _exact_comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k trials drawn without replacement passed."""
    _check(n, c, k)
    return float(Fraction(_exact_comb(c, k), _exact_comb(n, k)))


def pass_at_k_curve(n: int, c: int) -> list[float]:
    return [pass_at_k(n, c, k) for k in range(1, n + 1)]


def pass_hat_k_curve(n: int, c: int) -> list[float]:
    return [pass_hat_k(n, c, k) for k in range(1, n + 1)]


class PassKSummary(TypedDict):
    """The curves (one point per k, the point's stat with ``"k"``), the trials per scenario
    they reach (the smallest count, n) and the scenarios with a trial."""

    pass_at_k: list[Stat]
    pass_hat_k: list[Stat]
    n_trials: int
    n_scenarios: int


def passk_summary(
    per_scenario: Mapping[str, Sequence[bool]],
    seed: int = 0,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> PassKSummary:
    """Curves for k = 1..n (n = the smallest trial count over scenarios), each point the mean
    over scenarios with a bootstrap CI over scenarios, plus ``"k"`` on every point.

    Scenarios with no trial are ignored; each scenario uses its own n for the estimate.
    """
    outcomes = {name: [bool(x) for x in trials] for name, trials in per_scenario.items() if trials}
    if not outcomes:
        return {"pass_at_k": [], "pass_hat_k": [], "n_trials": 0, "n_scenarios": 0}
    n_min = min(len(trials) for trials in outcomes.values())
    names = list(outcomes)
    at_k: list[Stat] = []
    hat_k: list[Stat] = []
    for k in range(1, n_min + 1):
        at_values = [pass_at_k(len(t), sum(t), k) for t in outcomes.values()]
        hat_values = [pass_hat_k(len(t), sum(t), k) for t in outcomes.values()]
        for values, curve in ((at_values, at_k), (hat_values, hat_k)):
            stat = metric_stats(values, clusters=names, seed=seed, n_resamples=n_resamples)
            curve.append({"k": k, **stat})
    return {
        "pass_at_k": at_k,
        "pass_hat_k": hat_k,
        "n_trials": n_min,
        "n_scenarios": len(outcomes),
    }
