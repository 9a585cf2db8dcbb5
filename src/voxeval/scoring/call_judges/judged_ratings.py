"""Aggregation rules of the EVA-Bench judged call metrics, as pure functions of the ratings
a judge gave (1 = clear problem, 2 = minor problem, 3 = no problem; speakability 0/1).

Kept apart from the prompts so the rules have golden tests of their own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import mean

RATING_MIN, RATING_MAX = 1, 3
PASS_THRESHOLD = 0.5  # on the normalised 0-1 scale


def normalise_rating(rating: int) -> float:
    """A 1-3 rating on 0-1: (r - 1) / 2, so 1 -> 0.0, 2 -> 0.5, 3 -> 1.0."""
    if not RATING_MIN <= rating <= RATING_MAX:
        raise ValueError(f"rating {rating} is outside {RATING_MIN}-{RATING_MAX}")
    return (rating - RATING_MIN) / (RATING_MAX - RATING_MIN)


def faithfulness_rating(dimensions: Mapping[str, int]) -> int:
    """The call is as faithful as its worst dimension: the minimum rating."""
    if not dimensions:
        raise ValueError("faithfulness needs at least one dimension rating")
    return min(dimensions.values())


def progression_rating(dimensions: Mapping[str, int]) -> int:
    """3 when no dimension is flagged (below 3); 1 when any dimension is rated 1 or three or
    more are flagged; otherwise (one or two flagged at 2) 2."""
    if not dimensions:
        raise ValueError("conversation progression needs at least one dimension rating")
    flagged = [r for r in dimensions.values() if r < RATING_MAX]
    if not flagged:
        return RATING_MAX
    if min(flagged) == RATING_MIN or len(flagged) >= 3:
        return RATING_MIN
    return 2


def mean_normalised(ratings: Iterable[int]) -> float:
    """Mean over turns of the normalised 1-3 turn ratings (conciseness)."""
    values = [normalise_rating(r) for r in ratings]
    if not values:
        raise ValueError("no turn ratings to average")
    return mean(values)


def binary_share(verdicts: Iterable[int]) -> float:
    """Share of turns rated 1 on a 0/1 scale (speakability)."""
    values = list(verdicts)
    if not values:
        raise ValueError("no turn verdicts to average")
    if any(v not in (0, 1) for v in values):
        raise ValueError(f"verdicts must be 0 or 1: {values}")
    return sum(values) / len(values)


def passes(normalised: float) -> bool:
    return normalised >= PASS_THRESHOLD
