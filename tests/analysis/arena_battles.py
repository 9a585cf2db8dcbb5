"""Battle builders shared by the arena rating tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from voxeval.analysis.ratings.battles import Battle, Winner


def battle(
    a: str, b: str, winner: Winner, item: str = "d1", order: int = 0, **features: float
) -> Battle:
    """A battle; ``length_a=3, length_b=5`` style keywords become per-side features."""
    side_a = {k[:-2]: v for k, v in features.items() if k.endswith("_a")}
    side_b = {k[:-2]: v for k, v in features.items() if k.endswith("_b")}
    return Battle(a, b, winner, item, "semantic", order, side_a, side_b)


def simulated_tournament(
    strengths: Mapping[str, float],
    *,
    items: int,
    seed: int,
    tie_rate: float = 0.0,
) -> list[Battle]:
    """Every pair of systems compared once per item, in a random A/B order; A wins with the
    Bradley-Terry probability sigmoid(theta_A - theta_B), else B; a share ``tie_rate`` of
    battles, drawn independently of strength, is a tie (which leaves the BT truth intact)."""
    rng = np.random.default_rng(seed)
    names: Sequence[str] = sorted(strengths)
    battles: list[Battle] = []
    for item in range(items):
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                a, b = (first, second) if rng.random() < 0.5 else (second, first)
                p_a = 1.0 / (1.0 + np.exp(strengths[b] - strengths[a]))
                winner: Winner = "a" if rng.random() < p_a else "b"
                if rng.random() < tie_rate:
                    winner = "tie"
                battles.append(battle(a, b, winner, f"d{item}", len(battles)))
    return battles
