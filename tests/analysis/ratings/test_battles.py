from __future__ import annotations

import json

import pytest

from voxeval.analysis.ratings.battles import Battle, battle_from_judgement, in_sequence, systems_of
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement


def test_round_trip_and_scores() -> None:
    record = Battle("x", "y", "tie", "d7", "ambient", 3, {"length": 12.0}, {"length": 9.0})
    data = json.loads(json.dumps(record.to_dict()))
    assert Battle.from_dict(data) == record
    assert record.score_a == 0.5
    assert Battle("x", "y", "a", "d").score_a == 1.0 and Battle("x", "y", "b", "d").score_a == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"system_b": "x"}, "cannot battle itself"),
        ({"winner": "A"}, "winner must be one of"),
        ({"system_a": ""}, "must be non-empty"),
        ({"features_a": {"length": float("nan")}}, r"features_a.length is not finite"),
    ],
)
def test_invalid_battles_are_refused(kwargs: dict, message: str) -> None:
    fields = {"system_a": "x", "system_b": "y", "winner": "a", "item_id": "d1"} | kwargs
    with pytest.raises(ValueError, match=message):
        Battle(**fields)


def test_from_dict_names_missing_fields() -> None:
    with pytest.raises(ValueError, match="lacks field\\(s\\) winner, item_id"):
        Battle.from_dict({"system_a": "x", "system_b": "y"})


def test_systems_and_sequence() -> None:
    late = Battle("b", "c", "a", "d1", order=2)
    early = Battle("a", "b", "a", "d1", order=1)
    same = Battle("c", "a", "a", "d2", order=1)
    assert systems_of([late, early]) == ["a", "b", "c"]
    assert in_sequence([late, early, same]) == [early, same, late]


def test_battle_from_pairwise_judgement() -> None:
    voted = PairwiseJudgement("judge", "d3", "x", "y", "y", 120.0, 80.0, "paralinguistic")
    assert battle_from_judgement(voted, order=4) == Battle(
        "x", "y", "b", "d3", "paralinguistic", 4, {"length": 120.0}, {"length": 80.0}
    )
    tie = PairwiseJudgement("human", "d4", "y", "x", None)
    assert battle_from_judgement(tie) == Battle("y", "x", "tie", "d4")
    first_won = PairwiseJudgement("judge", "d5", "y", "x", "y", 10.0, None)
    assert battle_from_judgement(first_won).winner == "a"
    assert battle_from_judgement(first_won).features_a == {}
