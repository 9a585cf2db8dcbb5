"""The judge-template builders the judged metrics share (judged_call, judged_agent_turns):
each builder's scale, and the per-turn and per-dimension raters, golden values by hand."""

from __future__ import annotations

import pytest

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_agent_turns import turn_field_rater
from voxeval.scoring.call_judges.judged_call import (
    dimensions_template,
    number_field,
    rating_template,
    share_template,
    verdict_template,
)
from voxeval.scoring.call_judges.judged_ratings import faithfulness_rating, mean_normalised
from voxeval.scoring.judge import JudgeOutputError

SCHEMA: JSONObject = {"type": "object"}


def test_each_builder_sets_its_scale_and_keeps_name_prompt_and_schema() -> None:
    share = share_template("s", "sys", "user {x}")
    assert (share.min_score, share.max_score, share.integer) == (0, 1, False)
    assert (share.output, share.schema, share.rate) == ("json", None, None)
    verdict = verdict_template("v", "sys", "user", SCHEMA, number_field("verdict"))
    assert (verdict.min_score, verdict.max_score, verdict.integer) == (0, 1, True)
    assert verdict.schema == SCHEMA and verdict.name == "v"
    rating = rating_template("r", "sys", "user", SCHEMA, number_field("rating"))
    assert (rating.min_score, rating.max_score, rating.integer) == (1, 3, True)
    assert rating.parse('{"rating": 2}') == (2.0, {"rating": 2})


def test_a_dimensions_template_rates_with_its_rule_and_requires_every_dimension() -> None:
    template = dimensions_template("d", "sys", "user", ("a", "b"), faithfulness_rating)
    answer = (
        '{"dimensions": {"a": {"rating": 3, "evidence": "e"}, "b": {"rating": 2, "evidence": "f"}}}'
    )
    value, parsed = template.parse(answer)
    assert value == 2.0  # faithfulness: the worst dimension
    assert parsed is not None and set(parsed["dimensions"]) == {"a", "b"}
    with pytest.raises(JudgeOutputError, match="schema"):
        template.parse('{"dimensions": {"a": {"rating": 3, "evidence": "e"}}}')


def test_a_turn_field_rater_combines_every_expected_turn_once() -> None:
    rate = turn_field_rater("rating", mean_normalised)
    answer: JSONObject = {"turns": [{"turn": 2, "rating": 3}, {"turn": 1, "rating": 2}]}
    assert rate(answer, [1, 2]) == pytest.approx((0.5 + 1.0) / 2)
    with pytest.raises(JudgeOutputError, match="exactly the agent turns"):
        rate(answer, [1, 2, 3])
