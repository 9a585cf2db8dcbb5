"""One arena verdict between two systems: the record every rating function reads.

``system_a`` is the system shown in position A, ``system_b`` the one in position B; ``winner``
is ``"a"``, ``"b"`` or ``"tie"``. ``item_id`` names the compared dialogue (the independent
unit the bootstrap resamples), ``dimension`` the arena dimension, ``order`` the battle's place
in the judging sequence (online Elo replays battles in this order). ``features_a`` and
``features_b`` hold per-side style measurements (e.g. ``length`` in words, ``duration`` in
seconds) used by style control.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement

Winner = Literal["a", "b", "tie"]
WINNERS: tuple[Winner, ...] = ("a", "b", "tie")
# A's score for each verdict: a tie counts as half a win for each side.
SCORE_A: dict[Winner, float] = {"a": 1.0, "b": 0.0, "tie": 0.5}


class BattleRecord(TypedDict):
    """A battle as ``Battle.to_dict`` writes it."""

    system_a: str
    system_b: str
    winner: Winner
    item_id: str
    dimension: str
    order: int
    features_a: dict[str, float]
    features_b: dict[str, float]


@dataclass(frozen=True)
class Battle:
    system_a: str
    system_b: str
    winner: Winner
    item_id: str
    dimension: str = ""
    order: int = 0
    features_a: Mapping[str, float] = field(default_factory=dict)
    features_b: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.system_a or not self.system_b:
            raise ValueError("battle: system_a and system_b must be non-empty")
        if self.system_a == self.system_b:
            raise ValueError(f"battle {self.item_id!r}: a system cannot battle itself")
        if self.winner not in WINNERS:
            raise ValueError(
                f"battle {self.item_id!r}: winner must be one of {WINNERS}, not {self.winner!r}"
            )
        for side, features in (("features_a", self.features_a), ("features_b", self.features_b)):
            for name, value in features.items():
                if not math.isfinite(value):
                    raise ValueError(f"battle {self.item_id!r}: {side}.{name} is not finite")

    @property
    def score_a(self) -> float:
        """A's result: 1 win, 0.5 tie, 0 loss."""
        return SCORE_A[self.winner]

    def to_dict(self) -> BattleRecord:
        return {
            "system_a": self.system_a,
            "system_b": self.system_b,
            "winner": self.winner,
            "item_id": self.item_id,
            "dimension": self.dimension,
            "order": self.order,
            "features_a": dict(self.features_a),
            "features_b": dict(self.features_b),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Battle:
        missing = [k for k in ("system_a", "system_b", "winner", "item_id") if k not in data]
        if missing:
            raise ValueError(f"battle record lacks field(s) {', '.join(missing)}")
        return cls(
            system_a=str(data["system_a"]),
            system_b=str(data["system_b"]),
            winner=data["winner"],
            item_id=str(data["item_id"]),
            dimension=str(data.get("dimension", "")),
            order=int(data.get("order", 0)),
            features_a={str(k): float(v) for k, v in dict(data.get("features_a", {})).items()},
            features_b={str(k): float(v) for k, v in dict(data.get("features_b", {})).items()},
        )


def systems_of(battles: Iterable[Battle]) -> list[str]:
    """Every system that took part in a battle, sorted by name."""
    names: set[str] = set()
    for battle in battles:
        names.update((battle.system_a, battle.system_b))
    return sorted(names)


def in_sequence(battles: Sequence[Battle]) -> list[Battle]:
    """Battles sorted by ``order`` (stable: equal orders keep their given order)."""
    return sorted(battles, key=lambda battle: battle.order)


def battle_from_judgement(judgement: PairwiseJudgement, *, order: int = 0) -> Battle:
    """The battle of a ``PairwiseJudgement`` (the record the bias and agreement analyses
    read): the system shown first is A; both reply lengths, when known, become ``length``."""
    winner: Winner = (
        "tie" if judgement.is_tie else "a" if judgement.winner == judgement.first else "b"
    )
    features_a: dict[str, float] = {}
    features_b: dict[str, float] = {}
    if judgement.first_length is not None and judgement.second_length is not None:
        features_a["length"] = float(judgement.first_length)
        features_b["length"] = float(judgement.second_length)
    return Battle(
        system_a=judgement.first,
        system_b=judgement.second,
        winner=winner,
        item_id=judgement.item,
        dimension=judgement.dimension or "",
        order=order,
        features_a=features_a,
        features_b=features_b,
    )
