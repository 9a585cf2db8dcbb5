"""The rubric metrics on a hand-made dialogue record with a scripted in-process judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from voxeval.errors import ProviderUnavailable
from voxeval.providers.base import ChatResponse, LLMBase
from voxeval.scoring.dialogues.dialogue_record import (
    DialogueRecord,
    DialogueScoringResources,
    DialogueTurn,
    RubricCriterion,
)
from voxeval.scoring.dialogues.rubric import rubric, rubric_turns
from voxeval.scoring.judge import Judge

CRITERIA = (
    RubricCriterion("criteria_s_1", "general", "Coherent?"),
    RubricCriterion("criteria_s_2", "general", "Polite?"),
    RubricCriterion("criteria_m_1", "dimension", "Hears the alarm?"),
    RubricCriterion("criteria_d_1", "sample", "Suggests leaving?"),
)
RECORD = DialogueRecord(
    dialogue_id="amb-1",
    dimension="ambient",
    tier1="ambient-sound-perception",
    turns=(
        DialogueTurn(1, "That sounds like a fire alarm.", "[alarm] what is that noise?"),
        DialogueTurn(2, None, "should I stay?"),
    ),
    criteria=CRITERIA,
)


class ScriptedLLM(LLMBase):
    """Answers in turn from ``answers``; records every prompt."""

    name = "scripted"

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name}

    def chat(self, messages: list[dict[str, Any]], **_: Any) -> ChatResponse:
        self.prompts.append(str(messages[1]["content"]))
        answer = self.answers.pop(0)
        return ChatResponse(text=answer if isinstance(answer, str) else json.dumps(answer))


def resources(llm: ScriptedLLM, attempts: int = 3) -> DialogueScoringResources:
    return DialogueScoringResources(judge=lambda: Judge(llm, max_attempts=attempts))  # type: ignore[arg-type]


GOOD = {"criteria_s_1": 1, "criteria_s_2": 0, "criteria_m_1": 1, "criteria_d_1": 0}


def test_s_case_levels_and_prompt() -> None:
    llm = ScriptedLLM(GOOD)
    score = rubric(RECORD, resources(llm))
    assert score.value == pytest.approx(0.5)
    assert score.details["by_level"] == {"general": 0.5, "dimension": 1.0, "sample": 0.0}
    assert score.details["parse_failures"] == 0 and score.details["judge_calls"] == 1
    prompt = llm.prompts[0]
    assert "User: [alarm] what is that noise?" in prompt  # tags kept
    assert "Assistant: (no reply)" in prompt
    for criterion in CRITERIA:
        assert f"{criterion.id}: {criterion.text}" in prompt


def test_unknown_missing_and_non_binary_answers_are_parse_failures() -> None:
    unknown = {**GOOD, "criteria_d_5": 1}
    missing = {k: v for k, v in GOOD.items() if k != "criteria_m_1"}
    llm = ScriptedLLM(unknown, missing, {**GOOD, "criteria_s_1": 2}, GOOD)
    score = rubric(RECORD, resources(llm, attempts=4))
    assert score.value == pytest.approx(0.5)
    assert score.details["parse_failures"] == 3 and score.details["judge_calls"] == 4


def test_judge_out_of_format_after_every_attempt_is_pending() -> None:
    llm = ScriptedLLM("not json", {**GOOD, "extra": 1})
    score = rubric(RECORD, resources(llm, attempts=2))
    assert score.pending and score.value is None
    assert score.details["parse_failures"] == 2


def test_turn_level_uses_general_and_dimension_criteria_per_prefix() -> None:
    first = {"criteria_s_1": 1, "criteria_s_2": 1, "criteria_m_1": 0}
    second = {"criteria_s_1": 1, "criteria_s_2": 1, "criteria_m_1": 1}
    llm = ScriptedLLM(first, second)
    score = rubric_turns(RECORD, resources(llm))
    assert score.details["turns"]["T1"]["value"] == pytest.approx(2 / 3)
    assert score.details["turns"]["T2"]["value"] == pytest.approx(1.0)
    assert score.value == pytest.approx((2 / 3 + 1) / 2)
    assert "Turn 2" not in llm.prompts[0] and "Turn 2" in llm.prompts[1]
    assert "criteria_d_1" not in llm.prompts[0]


def test_without_judge_or_criteria_not_run() -> None:
    def missing() -> Judge:
        raise ProviderUnavailable("no judge configured")

    from voxeval.scoring.metric_runner import run_metric

    score = run_metric("rubric", RECORD, DialogueScoringResources(judge=missing))
    assert score.value is None and score.error == "no judge configured" and not score.pending
    bare = DialogueRecord(RECORD.turns, "x", "semantic")
    assert rubric(bare, resources(ScriptedLLM())).error is not None
    assert rubric_turns(bare, resources(ScriptedLLM())).error is not None


def test_content_density_scores_the_dialogue_record() -> None:
    from voxeval.scoring.dialogues.content_density import content_density

    turns = (RECORD.turns[0], DialogueTurn(2, "I am sorry. Leave the building now.", "stay?"))
    record = DialogueRecord(turns, "amb-1", "ambient", criteria=CRITERIA)
    score = content_density(record, resources(ScriptedLLM({"removable": [1]})))
    assert score.value == pytest.approx(4 / 7)  # "Leave the building now." of 7 words
