"""Golden tests of the judged call metrics' aggregation rules (hand-computed)."""

from __future__ import annotations

import pytest

from voxeval.scoring.call_judges.judged_ratings import (
    binary_share,
    faithfulness_rating,
    mean_normalised,
    normalise_rating,
    passes,
    progression_rating,
)


def test_normalisation_maps_1_2_3_to_0_half_1() -> None:
    assert [normalise_rating(r) for r in (1, 2, 3)] == [0.0, 0.5, 1.0]
    with pytest.raises(ValueError):
        normalise_rating(4)


def test_faithfulness_is_the_worst_dimension() -> None:
    assert faithfulness_rating({"a": 3, "b": 3, "c": 3, "d": 3, "e": 3}) == 3
    assert faithfulness_rating({"a": 3, "b": 2, "c": 3, "d": 2, "e": 3}) == 2
    assert faithfulness_rating({"a": 3, "b": 2, "c": 1, "d": 3, "e": 3}) == 1


@pytest.mark.parametrize(
    ("ratings", "expected"),
    [
        ((3, 3, 3, 3), 3),  # nothing flagged
        ((2, 3, 3, 3), 2),  # one flagged at 2
        ((2, 2, 3, 3), 2),  # two flagged at 2
        ((2, 2, 2, 3), 1),  # three flagged
        ((2, 2, 2, 2), 1),  # four flagged
        ((1, 3, 3, 3), 1),  # any 1
        ((1, 2, 3, 3), 1),
    ],
)
def test_progression_rule(ratings: tuple[int, ...], expected: int) -> None:
    dims = dict(zip(("tools", "loss", "redundant", "questions"), ratings, strict=True))
    assert progression_rating(dims) == expected


def test_conciseness_is_the_mean_of_normalised_turns() -> None:
    assert mean_normalised([3, 2, 1, 3]) == pytest.approx((1.0 + 0.5 + 0.0 + 1.0) / 4)
    assert mean_normalised([2]) == 0.5
    with pytest.raises(ValueError):
        mean_normalised([])


def test_speakability_share_and_pass_threshold() -> None:
    assert binary_share([1, 0, 1, 1]) == 0.75
    with pytest.raises(ValueError):
        binary_share([1, 2])
    assert passes(0.5) and not passes(0.49)
