"""Bradley-Terry ratings of arena battles, with cluster-bootstrap intervals and rank intervals.

Model: P(x beats y) = sigmoid(theta_x - theta_y). A tie counts as half a win for each side.
The strengths are the maximum-likelihood fit of ``paired_logit`` (L-BFGS, tiny ridge, centred).
Ratings use the Elo scale, rating = 400 theta / ln 10 + 1000, so that a 400-point gap means
10:1 odds and the mean rating is 1000; with an ``anchor`` system the ratings are shifted so
the anchor has exactly 1000 (in every bootstrap round too, so its own interval is [1000, 1000]
and the others' intervals are intervals of the gap to it).

Unlike online Elo the fit does not depend on the order of the battles. Intervals come from
``rating_bootstrap`` (dialogues resampled, default 1,000 rounds, seeded, percentile method).

Never more certain than the data: a system that won (or lost) every battle has no finite
maximum-likelihood rating; the number reported is set by the ridge alone, and every bootstrap
round (a resample of a sweep is a sweep) lands on the same ridge-set value, which would make a
zero-width interval and a certain rank. Such a system's interval is reported as unbounded
(``ci_low`` and ``ci_high`` null, ``unbounded`` naming why) and counts as (-inf, +inf) in the
rank intervals. Battles that do not link every system get the same treatment for all systems
(``disconnected_ratings``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from voxeval.analysis.ratings.battles import Battle, systems_of
from voxeval.analysis.ratings.paired_logit import RIDGE, fit_paired_logit
from voxeval.analysis.ratings.rank_intervals import rank_intervals
from voxeval.analysis.ratings.rating_bootstrap import (
    DEFAULT_RATING_RESAMPLES,
    cluster_bootstrap,
    percentile_interval,
)

RATING_CENTRE = 1000.0
RATING_SCALE = 400.0 / math.log(10.0)
DEFAULT_RATING_CONFIDENCE = 0.95
RATING_CI_METHOD = "cluster_bootstrap_percentile"

NOTE_TOO_FEW_ITEMS = "fewer than two compared items: no interval"
NOTE_TOO_FEW_ROUNDS = "fewer than two usable bootstrap rounds: no interval"
UNBOUNDED_WON = "won every battle: the rating is bounded only by the fit's ridge"
UNBOUNDED_LOST = "lost every battle: the rating is bounded only by the fit's ridge"
NOTE_DISCONNECTED = "the battles do not link every system: no interval and no rank"


class DisconnectedComparisons(ValueError):
    """Some systems were never compared, even indirectly, with the others: their relative
    strength is not identified by the battles."""


@dataclass(frozen=True)
class BattleArrays:
    """Battles as index arrays: systems and items sorted by name."""

    systems: list[str]
    items: list[str]
    index_a: np.ndarray
    index_b: np.ndarray
    score_a: np.ndarray
    item_index: np.ndarray

    @classmethod
    def of(cls, battles: Sequence[Battle]) -> BattleArrays:
        if not battles:
            raise ValueError("ratings: no battles")
        systems = systems_of(battles)
        items = sorted({battle.item_id for battle in battles})
        system_at = {name: i for i, name in enumerate(systems)}
        item_at = {name: i for i, name in enumerate(items)}
        return cls(
            systems=systems,
            items=items,
            index_a=np.array([system_at[b.system_a] for b in battles], dtype=np.intp),
            index_b=np.array([system_at[b.system_b] for b in battles], dtype=np.intp),
            score_a=np.array([b.score_a for b in battles], dtype=float),
            item_index=np.array([item_at[b.item_id] for b in battles], dtype=np.intp),
        )

    def is_connected(self, weights: np.ndarray | None = None) -> bool:
        """Whether the battles with positive weight link every system to every other."""
        keep = slice(None) if weights is None else weights > 0
        a, b = self.index_a[keep], self.index_b[keep]
        n = len(self.systems)
        graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
        n_components, _ = connected_components(graph, directed=False)
        return bool(n_components == 1)

    def components(self) -> list[list[str]]:
        n = len(self.systems)
        graph = coo_matrix((np.ones(len(self.index_a)), (self.index_a, self.index_b)), (n, n))
        _, labels = connected_components(graph, directed=False)
        groups: dict[int, list[str]] = {}
        for name, label in zip(self.systems, labels, strict=True):
            groups.setdefault(int(label), []).append(name)
        return list(groups.values())


class _PairTable:
    """Battles summed per ordered (A, B) pair: the BT likelihood only needs these counts."""

    def __init__(self, arrays: BattleArrays) -> None:
        n = len(arrays.systems)
        keys, self.pair_of_battle = np.unique(
            arrays.index_a * n + arrays.index_b, return_inverse=True
        )
        self.index_a, self.index_b = keys // n, keys % n
        self.score_a = arrays.score_a
        self.n_systems = n

    def fit(
        self, weights: np.ndarray, *, ridge: float, start: np.ndarray | None = None
    ) -> np.ndarray:
        n_pairs = len(self.index_a)
        wins_a = np.bincount(self.pair_of_battle, weights * self.score_a, n_pairs)
        wins_b = np.bincount(self.pair_of_battle, weights * (1.0 - self.score_a), n_pairs)
        return fit_paired_logit(
            self.index_a, self.index_b, wins_a, wins_b, self.n_systems, ridge=ridge, start=start
        )


def strengths_to_ratings(theta: np.ndarray, anchor_index: int | None = None) -> np.ndarray:
    """Elo-scale ratings of log-strengths; centred on 1000, or with the anchor at 1000."""
    ratings = RATING_SCALE * theta + RATING_CENTRE
    if anchor_index is not None:
        ratings = ratings - ratings[anchor_index] + RATING_CENTRE
    return ratings


def anchor_index_of(systems: list[str], anchor: str | None) -> int | None:
    if anchor is None:
        return None
    if anchor not in systems:
        raise ValueError(f"ratings: anchor system {anchor!r} took part in no battle")
    return systems.index(anchor)


def bradley_terry_strengths(battles: Sequence[Battle], *, ridge: float = RIDGE) -> dict[str, float]:
    """Centred log-strengths theta (natural-log odds scale) of the battles' systems."""
    arrays = BattleArrays.of(battles)
    require_connected(arrays)
    theta = _PairTable(arrays).fit(np.ones(len(battles)), ridge=ridge)
    return dict(zip(arrays.systems, theta.tolist(), strict=True))


def require_connected(arrays: BattleArrays) -> None:
    if not arrays.is_connected():
        groups = "; ".join(", ".join(group) for group in arrays.components())
        raise DisconnectedComparisons(
            f"ratings: the battles split the systems into unlinked groups ({groups})"
        )


def bradley_terry(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    ridge: float = RIDGE,
) -> dict[str, Any]:
    """Ratings, bootstrap intervals and rank intervals of every system (JSON-ready).

    ``{"systems": {name: {"rating", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
    "battles"}}, "anchor", "confidence", "method", "clusters", "resamples",
    "resamples_dropped", "unbounded"}`` plus ``"ci_note"`` when no interval could be formed
    (then the interval and rank fields are None). Raises DisconnectedComparisons when the
    battles do not link all systems."""
    arrays = BattleArrays.of(battles)
    require_connected(arrays)
    anchor_index = anchor_index_of(arrays.systems, anchor)
    table = _PairTable(arrays)
    theta = table.fit(np.ones(len(battles)), ridge=ridge)
    ratings = strengths_to_ratings(theta, anchor_index)

    def refit(weights: np.ndarray) -> np.ndarray | None:
        if not arrays.is_connected(weights):
            return None
        return strengths_to_ratings(table.fit(weights, ridge=ridge, start=theta), anchor_index)

    interval = item_bootstrap_interval(
        arrays, refit, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    return rating_report(
        arrays,
        ratings,
        interval.low,
        interval.high,
        anchor=anchor,
        confidence=confidence,
        resamples=interval.resamples,
        dropped=interval.dropped,
        note=interval.note,
    )


@dataclass(frozen=True)
class ItemInterval:
    """A percentile interval over item resamples, or the note that says why there is none."""

    low: np.ndarray | None
    high: np.ndarray | None
    note: str | None
    dropped: int  # rounds whose refit was undefined
    resamples: int  # rounds run (0 when too few items to resample)


def item_bootstrap_interval(
    arrays: BattleArrays,
    refit: Callable[[np.ndarray], np.ndarray | None],
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> ItemInterval:
    """Cluster-bootstrap ``refit`` over the compared items and take the percentile interval of
    every parameter it returns; none with fewer than two items or two usable rounds."""
    if len(arrays.items) < 2:
        return ItemInterval(None, None, NOTE_TOO_FEW_ITEMS, dropped=0, resamples=0)
    draws = cluster_bootstrap(
        arrays.item_index, len(arrays.items), refit, n_resamples=n_resamples, seed=seed
    )
    if len(draws.estimates) < 2:
        return ItemInterval(None, None, NOTE_TOO_FEW_ROUNDS, draws.dropped, n_resamples)
    low, high = percentile_interval(draws.estimates, confidence)
    return ItemInterval(low, high, None, draws.dropped, n_resamples)


def unbounded_reasons(arrays: BattleArrays) -> dict[str, str]:
    """``{system: why}`` for the systems that won all their battles or lost all of them (a tie
    is half a win, so any tie bounds the estimate): their maximum-likelihood rating is
    infinite and the reported one is set by the ridge alone. (A whole group beating everyone
    else is not detected here.)"""
    n = len(arrays.systems)
    won = np.bincount(arrays.index_a, arrays.score_a, n) + np.bincount(
        arrays.index_b, 1.0 - arrays.score_a, n
    )
    played = np.bincount(arrays.index_a, minlength=n) + np.bincount(arrays.index_b, minlength=n)
    reasons = {}
    for i, name in enumerate(arrays.systems):
        if played[i] > 0 and won[i] == played[i]:
            reasons[name] = UNBOUNDED_WON
        elif played[i] > 0 and won[i] == 0:
            reasons[name] = UNBOUNDED_LOST
    return reasons


def unbounded_systems(arrays: BattleArrays) -> list[str]:
    """The systems of ``unbounded_reasons``, by name."""
    return list(unbounded_reasons(arrays))


def disconnected_ratings(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    ridge: float = RIDGE,
) -> dict[str, Any]:
    """The ``bradley_terry`` layout for battles that split the systems into unlinked groups:
    the ridge fit's numbers (centred within each group), every system marked unbounded with
    the groups named, no interval and no rank, since the groups' relative strength is not
    identified by any battle."""
    arrays = BattleArrays.of(battles)
    groups = arrays.components()
    anchor_index = anchor_index_of(arrays.systems, anchor)
    ratings = strengths_to_ratings(
        _PairTable(arrays).fit(np.ones(len(battles)), ridge=ridge), anchor_index
    )
    named = "; ".join(", ".join(group) for group in groups)
    reason = f"not linked to every other system by the battles (groups: {named})"
    report = rating_report(
        arrays,
        ratings,
        None,
        None,
        anchor=anchor,
        confidence=confidence,
        resamples=0,
        dropped=0,
        note=NOTE_DISCONNECTED,
        unbounded=dict.fromkeys(arrays.systems, reason),
    )
    report["groups"] = groups
    return report


def rating_report(
    arrays: BattleArrays,
    ratings: np.ndarray,
    low: np.ndarray | None,
    high: np.ndarray | None,
    *,
    anchor: str | None,
    confidence: float,
    resamples: int,
    dropped: int,
    note: str | None,
    unbounded: dict[str, str] | None = None,
    method: str = RATING_CI_METHOD,
) -> dict[str, Any]:
    """The JSON layout shared by the rating reports; ``unbounded`` (default: the systems that
    won or lost every battle) get no interval and count as (-inf, +inf) in the ranks."""
    n_battles = np.bincount(arrays.index_a, minlength=len(arrays.systems)) + np.bincount(
        arrays.index_b, minlength=len(arrays.systems)
    )
    reasons = unbounded_reasons(arrays) if unbounded is None else unbounded
    ranks = None
    if low is not None and high is not None:
        # On small skewed samples a percentile interval can miss the full-data estimate;
        # widen it to hold the estimate so a rank interval never contradicts its rating.
        low, high = np.minimum(low, ratings), np.maximum(high, ratings)
        ranks = rank_intervals(
            {
                name: (-math.inf, math.inf) if name in reasons else (float(low[i]), float(high[i]))
                for i, name in enumerate(arrays.systems)
            }
        )
    systems: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(arrays.systems):
        open_ended = name in reasons
        systems[name] = {
            "rating": float(ratings[i]),
            "ci_low": None if low is None or open_ended else float(low[i]),
            "ci_high": None if high is None or open_ended else float(high[i]),
            "rank": None if ranks is None else ranks[name].rank,
            "rank_low": None if ranks is None else ranks[name].best,
            "rank_high": None if ranks is None else ranks[name].worst,
            "battles": int(n_battles[i]),
            "unbounded": reasons.get(name),
        }
    report: dict[str, Any] = {
        "systems": systems,
        "anchor": anchor,
        "confidence": confidence,
        "method": method,
        "clusters": len(arrays.items),
        "resamples": resamples,
        "resamples_dropped": dropped,
        "unbounded": sorted(reasons),
    }
    if note is not None:
        report["ci_note"] = note
    return report
