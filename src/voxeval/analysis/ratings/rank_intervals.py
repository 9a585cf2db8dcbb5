"""Ranks that respect the uncertainty of the ratings, read from their confidence intervals.

A system's rank is 1 + the number of systems whose interval lies wholly above its own (their
lower bound exceeds its upper bound): only systems that are clearly better push it down, so
systems whose intervals overlap share a rank. The rank interval [best, worst] adds the other
side: the worst rank is the number of systems minus those whose interval lies wholly below its
own. The rank is therefore the best end of the interval; a narrow interval ([2, 2]) means the
data place the system firmly, a wide one ([1, 4]) that it could sit anywhere in that range.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple


class RankInterval(NamedTuple):
    rank: int
    best: int
    worst: int


def rank_intervals(intervals: Mapping[str, tuple[float, float]]) -> dict[str, RankInterval]:
    """``{system: (ci_low, ci_high)}`` -> ``{system: RankInterval}``."""
    for name, (low, high) in intervals.items():
        if low > high:
            raise ValueError(f"rank intervals: {name!r} has ci_low {low} above ci_high {high}")
    n = len(intervals)
    result: dict[str, RankInterval] = {}
    for name, (low, high) in intervals.items():
        clearly_better = sum(
            1 for other, (o_low, _) in intervals.items() if other != name and o_low > high
        )
        clearly_worse = sum(
            1 for other, (_, o_high) in intervals.items() if other != name and o_high < low
        )
        best = 1 + clearly_better
        result[name] = RankInterval(rank=best, best=best, worst=n - clearly_worse)
    return result
