"""Typed reads of a judge's JSON answer, and the stored-score reader."""

import pytest

from voxeval.scoring.judge import JudgeOutputError
from voxeval.scoring.judge_answer import as_int, as_number, as_objects, as_strings
from voxeval.scoring.score import Score


def test_reads_the_types_the_metrics_rely_on():
    assert as_int(2.0, "rating") == 2
    assert as_int("3", "rating") == 3
    assert as_number(1, "verdict") == 1.0
    assert as_objects([{"turn": 1}], "turns") == [{"turn": 1}]
    assert as_strings(["a", 1], "tags") == ["a", "1"]


@pytest.mark.parametrize("value", [None, True, [1], {"a": 1}, "x"])
def test_a_field_of_the_wrong_type_names_the_field(value):
    with pytest.raises(JudgeOutputError, match=r"'turns\.rating'"):
        as_int(value, "turns.rating")


def test_items_that_are_not_objects_are_rejected():
    with pytest.raises(JudgeOutputError, match=r"'turns\[1\]'"):
        as_objects([{"turn": 1}, 2], "turns")


def test_score_round_trips_and_a_bad_stored_field_is_an_error():
    score = Score(value=3, passed=True, details={"turns": [1, 2]})
    assert Score.from_dict(score.to_dict()) == score
    assert Score.from_dict({"value": None, "error": "x", "details": None}).details == {}
    with pytest.raises(ValueError, match="value"):
        Score.from_dict({"value": "high"})
