"""Win/tie/loss of one system against another and the win rate over many such outcomes.

An outcome is seen from system A: ``win`` when A's value is better (higher or lower, as the
metric says), ``loss`` when B's is, ``tie`` when both are equal up to float rounding. The win
rate counts a tie as half a win, so swapping A and B turns a rate r into 1 - r. Its interval is
the cluster bootstrap of ``metric_stats`` over the protocol's independent unit (the query)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

from voxeval.analysis.bootstrap import Stat, metric_stats

Outcome = Literal["win", "tie", "loss"]
OUTCOME_VALUES: dict[Outcome, float] = {"win": 1.0, "tie": 0.5, "loss": 0.0}
_SWAPPED: dict[Outcome, Outcome] = {"win": "loss", "tie": "tie", "loss": "win"}
# Values this close are equal: two systems' scores computed on different paths can differ
# in the last bits (e.g. a mean summed in another order) without either being better.
_REL_TOL, _ABS_TOL = 1e-9, 1e-12


def compare_values(a: float, b: float, better: Literal["higher", "lower"]) -> Outcome:
    """A's outcome against B for a metric that is better when ``better``."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    if math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):
        return "tie"
    a_is_better = a > b if better == "higher" else a < b
    return "win" if a_is_better else "loss"


def swapped(outcome: Outcome) -> Outcome:
    """The same comparison seen from B."""
    return _SWAPPED[outcome]


def win_rate_stats(
    outcomes: Sequence[Outcome],
    *,
    clusters: Sequence[Hashable] | None = None,
    seed: int = 0,
) -> Stat:
    """A's win rate (ties half) as a ``metric_stats`` stat, with ``wins``, ``ties`` and
    ``losses`` counts; ``clusters`` gives each outcome's independent unit."""
    values = [OUTCOME_VALUES[o] for o in outcomes]
    stat = metric_stats(values, clusters=clusters, seed=seed)
    stat["wins"] = sum(1 for o in outcomes if o == "win")
    stat["ties"] = sum(1 for o in outcomes if o == "tie")
    stat["losses"] = sum(1 for o in outcomes if o == "loss")
    return stat
