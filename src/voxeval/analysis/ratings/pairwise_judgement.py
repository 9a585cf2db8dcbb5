"""One pairwise judgement (arena vote) as a plain record, whoever gave it: an LLM judge, a rater
in the app, or a human vote imported from a file. Bias and agreement analyses take only these.

``first`` is the system whose reply was shown first (top / "A"), ``second`` the other one;
``winner`` is one of the two names or None for a tie. Lengths are any positive size of the
reply (words, characters or seconds) - only which one is larger matters."""

from __future__ import annotations

from dataclasses import dataclass

TIE = "tie"


@dataclass(frozen=True)
class PairwiseJudgement:
    rater: str
    item: str
    first: str
    second: str
    winner: str | None
    first_length: float | None = None
    second_length: float | None = None
    dimension: str | None = None

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError(f"judgement of item {self.item!r}: a system cannot face itself")
        if self.winner is not None and self.winner not in (self.first, self.second):
            raise ValueError(
                f"judgement of item {self.item!r}: winner {self.winner!r} is neither "
                f"{self.first!r} nor {self.second!r}"
            )

    @property
    def is_tie(self) -> bool:
        return self.winner is None

    @property
    def first_won(self) -> bool:
        return self.winner == self.first

    @property
    def pair(self) -> tuple[str, str]:
        """The two systems in name order (the same for both presentation orders)."""
        a, b = sorted((self.first, self.second))
        return a, b

    def score_of(self, system: str) -> float:
        """1 for a win, 0.5 for a tie, 0 for a loss of ``system`` in this judgement."""
        if system not in (self.first, self.second):
            raise ValueError(f"{system!r} is not in the judgement of item {self.item!r}")
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == system else 0.0
