"""Online Elo as MTalk-Bench computes it, kept for comparability with its published tables.

Every system starts at 1000. Battles are replayed in judging order; for A against B the
expected score is E_A = 1 / (1 + 10^((R_B - R_A) / 400)), A's result S_A is 1 for a win,
0.5 for a tie and 0 for a loss, and both ratings move by K = 4 times the surprise:
R_A += K (S_A - E_A), R_B += K ((1 - S_A) - (1 - E_A)). The result depends on the battle
order, which is why the Bradley-Terry fit (order-free, with intervals) is the primary rating.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict, Unpack

from voxeval.analysis.ratings.battles import Battle, in_sequence, systems_of

ELO_INITIAL = 1000.0
ELO_K = 4.0
ELO_SCALE = 400.0
ELO_BASE = 10.0


def expected_score(
    rating_a: float, rating_b: float, *, scale: float = ELO_SCALE, base: float = ELO_BASE
) -> float:
    """A's expected score against B."""
    return 1.0 / (1.0 + base ** ((rating_b - rating_a) / scale))


class EloSettings(TypedDict, total=False):
    """``replay_elo``'s options (defaults there)."""

    systems: Iterable[str]
    initial: float
    k: float
    scale: float
    base: float


def online_elo(battles: Sequence[Battle], **settings: Unpack[EloSettings]) -> dict[str, float]:
    """Final Elo rating of every system after replaying ``battles`` sorted by ``order``;
    ``systems`` adds systems that have not battled yet (they keep ``initial``)."""
    return replay_elo(in_sequence(battles), **settings)


def replay_elo(
    battles: Iterable[Battle],
    *,
    systems: Iterable[str] = (),
    initial: float = ELO_INITIAL,
    k: float = ELO_K,
    scale: float = ELO_SCALE,
    base: float = ELO_BASE,
) -> dict[str, float]:
    """Online Elo over ``battles`` in the order given (``order`` is not read)."""
    battles = list(battles)
    ratings = dict.fromkeys(sorted({*systems, *systems_of(battles)}), initial)
    for battle in battles:
        r_a, r_b = ratings[battle.system_a], ratings[battle.system_b]
        e_a = expected_score(r_a, r_b, scale=scale, base=base)
        s_a = battle.score_a
        ratings[battle.system_a] = r_a + k * (s_a - e_a)
        ratings[battle.system_b] = r_b + k * ((1.0 - s_a) - (1.0 - e_a))
    return ratings
