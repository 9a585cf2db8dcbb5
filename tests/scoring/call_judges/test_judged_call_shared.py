"""The pieces the judged call metrics share (judged_call): templates, raters and the score of a
dimensions answer, golden values by hand."""

from __future__ import annotations

import json

import pytest

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges import conversation_progression, faithfulness
from voxeval.scoring.call_judges.judged_call import (
    dimensions_score,
    number_field,
    rating_template,
    share_template,
    turns_schema,
)
from voxeval.scoring.judge import JudgeOutputError

ANSWER: JSONObject = {
    "dimensions": {
        "a": {"rating": 3, "evidence": "fine"},
        "b": {"rating": 2, "evidence": "repeated itself"},
    }
}


def test_a_dimensions_score_normalises_and_keeps_the_evidence_in_order() -> None:
    score = dimensions_score(2.0, ANSWER, list_flagged=True)
    assert score.value == 0.5 and score.passed is True
    assert list(score.details) == ["rating", "dimensions", "flagged", "evidence"]
    assert score.details["dimensions"] == {"a": 3, "b": 2}
    assert score.details["flagged"] == ["b"]
    assert score.details["evidence"] == {"a": "fine", "b": "repeated itself"}
    plain = dimensions_score(1.0, ANSWER)
    assert plain.value == 0.0 and plain.passed is False
    assert list(plain.details) == ["rating", "dimensions", "evidence"]


def test_progression_lists_flagged_dimensions_and_faithfulness_does_not() -> None:
    assert "flagged" in conversation_progression._score(2.0, ANSWER).details
    assert "flagged" not in faithfulness._score(2.0, ANSWER).details


def test_templates_carry_their_scales() -> None:
    share = share_template("t", "s", "u", {"type": "object"})
    assert (share.min_score, share.max_score, share.integer, share.output) == (0, 1, False, "json")
    rated = rating_template("r", "s", "u", {"type": "object"}, number_field("rating"))
    assert (rated.min_score, rated.max_score, rated.integer) == (1, 3, True)
    value, parsed = rated.parse(json.dumps({"rating": 2}))
    assert value == 2.0 and parsed == {"rating": 2}
    with pytest.raises(JudgeOutputError):
        number_field("rating")({"rating": "two"})


def test_a_turns_schema_lists_turn_first_and_requires_every_field() -> None:
    schema = turns_schema({"speakable": {"type": "integer"}, "reason": {"type": "string"}})
    items = schema["properties"]["turns"]["items"]
    assert list(items["properties"]) == ["turn", "speakable", "reason"]
    assert items["required"] == ["turn", "speakable", "reason"]
    assert items["additionalProperties"] is False and schema["required"] == ["turns"]
