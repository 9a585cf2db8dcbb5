"""Binary rubric verdicts as plain records, and the case score they add up to.

A case score (S_case) is the mean of the criteria values one rater gave one system's reply to
one item; it is what the arena/rubric agreement compares and what the rubric exclusion
recomputes without some criteria."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

CaseKey = tuple[str, str, str]  # (rater, item, system)


@dataclass(frozen=True)
class RubricValue:
    rater: str
    item: str
    system: str
    criterion: str
    value: float  # 1 = criterion met, 0 = not met

    def __post_init__(self) -> None:
        if self.value not in (0, 1):
            raise ValueError(
                f"rubric value of {self.system!r} on item {self.item!r}, criterion "
                f"{self.criterion!r}, is {self.value!r}; it must be 0 or 1"
            )


def case_scores(values: Iterable[RubricValue]) -> dict[CaseKey, float]:
    """``{(rater, item, system): mean of its criteria values}``."""
    sums: dict[CaseKey, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for value in values:
        entry = sums[(value.rater, value.item, value.system)]
        entry[0] += float(value.value)
        entry[1] += 1.0
    return {key: total / count for key, (total, count) in sums.items()}
