"""Which two systems the arena compares next.

``all_pairs`` (the default schedule) compares every unordered pair once per item; the judge
sees each pair in both orders anyway. ``AdaptivePairing`` reproduces MTalk-Bench's dynamic
pairing for comparability: rank all pairs by the gap between their current ratings, keep the
3 closest, pick one of them uniformly at random and randomise which system is shown as A.
Every random choice comes from the generator seeded at construction, so the same seed and the
same ratings give the same sequence of proposals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np

ADAPTIVE_CANDIDATES = 3


def all_pairs(systems: Iterable[str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct systems, in sorted name order."""
    names = sorted(set(systems))
    return list(combinations(names, 2))


def closest_pairs(
    ratings: Mapping[str, float], count: int = ADAPTIVE_CANDIDATES
) -> list[tuple[str, str]]:
    """The ``count`` pairs with the smallest rating gap (ties broken by the names, so the
    candidates do not depend on the mapping's order)."""
    pairs = all_pairs(ratings)
    pairs.sort(key=lambda pair: (abs(ratings[pair[0]] - ratings[pair[1]]), pair))
    return pairs[:count]


class AdaptivePairing:
    """Seeded proposer of the next comparison from the current ratings."""

    def __init__(self, seed: int, *, candidates: int = ADAPTIVE_CANDIDATES) -> None:
        if candidates < 1:
            raise ValueError(f"adaptive pairing: candidates must be >= 1, not {candidates}")
        self._rng = np.random.default_rng(seed)
        self.candidates = candidates

    def propose(self, ratings: Mapping[str, float]) -> tuple[str, str]:
        """``(system shown as A, system shown as B)`` for the next battle."""
        if len(ratings) < 2:
            raise ValueError("adaptive pairing: needs at least two systems")
        pool: Sequence[tuple[str, str]] = closest_pairs(ratings, self.candidates)
        first, second = pool[int(self._rng.integers(len(pool)))]
        return (second, first) if self._rng.random() < 0.5 else (first, second)
