"""Bootstrap intervals for online Elo, with rank intervals.

Online Elo (``elo.online_elo``) is one number per system that depends on the order of the
battles. Its uncertainty is measured as FastChat measures it, with one change: a round draws
dialogues (the independent unit), not battles, with replacement, as many as there are, and
replays the drawn dialogues' battles in the order drawn (each dialogue's own battles in
judging order), so the rounds vary both the sample and the order. A system that appears in
no drawn dialogue has no rating in that round; its interval comes from the rounds it is in.

The point estimate is, by default, the online Elo of all battles in judging order (the
reference's headline). ``point="median"`` gives FastChat's convention instead: the median of
the bootstrap ratings. Intervals are percentile intervals, widened to hold the point, and
rank intervals are read from them (``rank_intervals``). A system that won or lost every
battle, or battles that do not link every system, get an unbounded interval as in
``bradley_terry``: online Elo keeps such a system finite only because K is small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from voxeval.analysis.ratings.battles import Battle, in_sequence
from voxeval.analysis.ratings.bradley_terry import (
    DEFAULT_RATING_CONFIDENCE,
    NOTE_TOO_FEW_ITEMS,
    NOTE_TOO_FEW_ROUNDS,
    BattleArrays,
    rating_report,
)
from voxeval.analysis.ratings.elo import ELO_INITIAL, ELO_K, replay_elo
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES

EloPoint = Literal["final", "median"]
ELO_CI_METHOD = "cluster_bootstrap_percentile_replayed"


def elo_intervals(
    battles: Sequence[Battle],
    *,
    point: EloPoint = "final",
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    k: float = ELO_K,
    initial: float = ELO_INITIAL,
    unbounded: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Online Elo with bootstrap intervals and rank intervals, in the layout of
    ``bradley_terry`` plus ``point``, ``k``, ``initial`` and ``order`` ("judging").
    ``unbounded``: systems whose interval is open (default: those that won or lost every
    battle)."""
    if point not in ("final", "median"):
        raise ValueError(f"elo intervals: point must be 'final' or 'median', not {point!r}")
    arrays = BattleArrays.of(battles)
    sequence = in_sequence(battles)
    final = replay_elo(sequence, k=k, initial=initial)
    by_item: dict[str, list[Battle]] = {}
    for battle in sequence:
        by_item.setdefault(battle.item_id, []).append(battle)
    items = list(by_item)
    column = {name: i for i, name in enumerate(arrays.systems)}
    rng = np.random.default_rng(seed)
    note = None
    draws = np.full((0, len(arrays.systems)), np.nan)
    if len(items) < 2:
        note = NOTE_TOO_FEW_ITEMS
    else:
        rows = np.full((n_resamples, len(arrays.systems)), np.nan)
        for r in range(n_resamples):
            drawn = [b for i in rng.integers(0, len(items), len(items)) for b in by_item[items[i]]]
            for name, rating in replay_elo(drawn, k=k, initial=initial).items():
                rows[r, column[name]] = rating
        draws = rows
    counted = np.sum(~np.isnan(draws), axis=0)
    if note is None and counted.min() < 2:
        note = NOTE_TOO_FEW_ROUNDS
    ratings = np.array([final[name] for name in arrays.systems])
    low = high = None
    if note is None:
        tail = (1.0 - confidence) / 2.0
        low, high = np.nanquantile(draws, [tail, 1.0 - tail], axis=0)
        if point == "median":
            ratings = np.nanmedian(draws, axis=0)
    report = rating_report(
        arrays,
        ratings,
        low,
        high,
        anchor=None,
        confidence=confidence,
        resamples=n_resamples if note != NOTE_TOO_FEW_ITEMS else 0,
        dropped=0,
        note=note,
        unbounded=unbounded,
        method=ELO_CI_METHOD,
    )
    report.pop("anchor")
    report.update(point=point, k=k, initial=initial, order="judging")
    return report
