"""Head-to-head record of every pair of systems, whatever position each was shown in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from voxeval.analysis.ratings.battles import Battle


class WinRecord(TypedDict):
    wins: int
    ties: int
    losses: int
    n: int
    win_rate: float


def win_matrix(battles: Iterable[Battle]) -> dict[str, dict[str, WinRecord]]:
    """``matrix[x][y]`` = x's record against y: ``wins``, ``ties``, ``losses``, ``n`` and
    ``win_rate`` (ties count half, so ``matrix[x][y].win_rate + matrix[y][x].win_rate = 1``).
    Only pairs that met at least once appear."""
    counts: dict[tuple[str, str], list[int]] = {}
    for battle in battles:
        for me, other, won, lost in (
            (battle.system_a, battle.system_b, "a", "b"),
            (battle.system_b, battle.system_a, "b", "a"),
        ):
            record = counts.setdefault((me, other), [0, 0, 0])
            record[0 if battle.winner == won else 2 if battle.winner == lost else 1] += 1
    matrix: dict[str, dict[str, WinRecord]] = {}
    for (me, other), (wins, ties, losses) in sorted(counts.items()):
        n = wins + ties + losses
        matrix.setdefault(me, {})[other] = {
            "wins": wins,
            "ties": ties,
            "losses": losses,
            "n": n,
            "win_rate": (wins + 0.5 * ties) / n,
        }
    return matrix
