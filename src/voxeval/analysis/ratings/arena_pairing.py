"""Which two systems the arena compares next.

``all_pairs`` (the default schedule) compares every unordered pair once per item; the judge
sees each pair in both orders anyway. ``AdaptivePairing`` reproduces MTalk-Bench's dynamic
pairing for comparability: rank all pairs by the gap between their current ratings, keep the
3 closest, pick one of them uniformly at random and randomise which system is shown as A.
Every random choice comes from the generator seeded at construction, so the same seed and the
same ratings give the same sequence of proposals.

Coverage (voxeval's addition, used when the comparisons made so far are passed as ``links``):
while those comparisons do not link every system (a system never compared is a group of its
own), the candidates are the pairs that join two unlinked groups and hold as many
never-compared systems as any such pair (two, else one, else none), the 3 closest in rating
among them. Without it a fresh run, where every rating is the same, draws among the first
pairs by name and a system can stay out of every comparison, and out of the ratings. Once all
systems are linked the reference's rule applies unchanged.
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


def _groups(systems: Iterable[str], links: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each system's group representative: systems joined by a chain of links share one."""
    parent = {name: name for name in systems}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for x, y in links:
        if x in parent and y in parent:
            parent[root(x)] = root(y)
    return {name: root(name) for name in parent}


def joining_pairs(
    ratings: Mapping[str, float], links: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The pairs that join two groups not linked by ``links``, best first: pairs of two
    never-compared systems, then one, then none; within that, the smallest rating gap, then
    the names. Empty when every system is linked to every other."""
    links = list(links)
    group = _groups(ratings, links)
    compared = {name for pair in links for name in pair}
    pairs = [pair for pair in all_pairs(ratings) if group[pair[0]] != group[pair[1]]]

    def rank(pair: tuple[str, str]) -> tuple[int, float, tuple[str, str]]:
        fresh = sum(1 for name in pair if name not in compared)
        return (-fresh, abs(ratings[pair[0]] - ratings[pair[1]]), pair)

    return sorted(pairs, key=rank)


class AdaptivePairing:
    """Seeded proposer of the next comparison from the current ratings."""

    def __init__(self, seed: int, *, candidates: int = ADAPTIVE_CANDIDATES) -> None:
        if candidates < 1:
            raise ValueError(f"adaptive pairing: candidates must be >= 1, not {candidates}")
        self._rng = np.random.default_rng(seed)
        self.candidates = candidates

    def propose(
        self,
        ratings: Mapping[str, float],
        links: Iterable[tuple[str, str]] | None = None,
    ) -> tuple[str, str]:
        """``(system shown as A, system shown as B)`` for the next battle. ``links``: the pairs
        compared (or planned) so far; given, the candidates join unlinked groups first."""
        if len(ratings) < 2:
            raise ValueError("adaptive pairing: needs at least two systems")
        links = None if links is None else list(links)
        joining = [] if links is None else joining_pairs(ratings, links)
        if joining:
            # only pairs as fresh as the best one: two new systems before one, one before none
            compared = {name for pair in links or () for name in pair}
            fresh = sum(1 for name in joining[0] if name not in compared)
            tier = [p for p in joining if sum(1 for n in p if n not in compared) == fresh]
            pool: Sequence[tuple[str, str]] = tier[: self.candidates]
        else:
            pool = closest_pairs(ratings, self.candidates)
        first, second = pool[int(self._rng.integers(len(pool)))]
        return (second, first) if self._rng.random() < 0.5 else (first, second)
