"""The dialogue schema: taxonomy-checked capabilities, criterion ids per level, review status,
tags kept as annotations."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from voxeval.benchmarks.mtalk.dialogue import (
    Dialogue,
    strip_tags,
    transcript_tags,
    turn_item_id,
)
from voxeval.benchmarks.mtalk.mtalk_taxonomy import SCENARIO_IDS, TAXONOMY, scenario_of_scene


def _dialogue(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "para-health-01",
        "dimension": "paralinguistic",
        "scenario": "health-medical",
        "capability": {"tier1": "paralinguistic-comprehension", "tier2": "emotion-detection"},
        "turns": [
            {"transcript": "<anxious tone> My chest feels tight [sigh] since this morning."},
            {"transcript": "Should I call someone?"},
        ],
        "rubrics": {
            "general": [{"id": "criteria_s_1", "text": "Is the reply fluent?"}],
            "dimension": [{"id": "criteria_m_1", "text": "Does it notice the anxiety?"}],
            "sample": [
                {"id": "criteria_d_1", "text": "Does it advise urgent care?", "status": "edited"},
                {"id": "criteria_d_2", "text": "Does it ask about pain?", "status": "pending"},
                {"id": "criteria_d_3", "text": "Does it joke?", "status": "rejected"},
            ],
        },
    }
    base.update(changes)
    return base


def test_taxonomy_has_the_papers_counts() -> None:
    assert len(SCENARIO_IDS) == 9
    assert [len(TAXONOMY[d]) for d in ("semantic", "paralinguistic", "ambient")] == [5, 2, 2]
    tier2 = sum(len(sub) for dim in TAXONOMY.values() for _, sub in dim.values())
    assert tier2 == 3 + 2 + 2 + 2 + 2 + 3 + 3 + 3 + 2
    assert scenario_of_scene(1) == "family-domestic"
    assert scenario_of_scene(9) == "service-oriented"
    assert scenario_of_scene(10) is None


def test_a_dialogue_keeps_tags_and_uses_only_reviewed_criteria() -> None:
    dialogue = Dialogue.model_validate(_dialogue())
    assert dialogue.turns[0].tags == ["<anxious tone>", "[sigh]"]
    assert strip_tags(dialogue.turns[0].transcript) == "My chest feels tight since this morning."
    assert [c.id for c in dialogue.rubrics.used()] == [
        "criteria_s_1",
        "criteria_m_1",
        "criteria_d_1",
    ]
    assert [c.id for c in dialogue.rubrics.used("sample")] == ["criteria_d_1"]
    assert dialogue.item_ids() == ["para-health-01.turn1", "para-health-01.turn2"]
    assert turn_item_id("sem-3-2", 3) == "sem-3-2.turn3"
    assert transcript_tags("[laughs] fine <slow pace>") == ["[laughs]", "<slow pace>"]


def test_capability_and_scenario_accept_the_papers_labels() -> None:
    dialogue = Dialogue.model_validate(
        _dialogue(
            dimension="semantic",
            scenario="Health and Medical Communication",
            capability={"tier1": "Understanding & Memory", "tier2": "Context Consistency"},
        )
    )
    assert dialogue.scenario == "health-medical"
    assert dialogue.capability is not None
    assert (dialogue.capability.tier1, dialogue.capability.tier2) == (
        "understanding-memory",
        "context-consistency",
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dimension": "ambient"}, "capability.tier1: 'paralinguistic-comprehension' is not"),
        (
            {"capability": {"tier1": "paralinguistic-comprehension", "tier2": "cultural-fit"}},
            "capability.tier2: 'cultural-fit' is not part of paralinguistic-comprehension",
        ),
        ({"scenario": "space-travel"}, "unknown scenario 'space-travel'"),
        ({"id": "a__b"}, "no '__'"),
        ({"turns": []}, "at least 1 item"),
        (
            {"rubrics": {"general": [{"id": "criteria_d_1", "text": "x"}]}},
            "general[0]: id 'criteria_d_1' is not a general criterion",
        ),
        (
            {"rubrics": {"sample": [{"id": "criteria_d_01", "text": "x"}]}},
            "'criteria_d_01' is not criteria_s_N",
        ),
        (
            {
                "rubrics": {
                    "sample": [
                        {"id": "criteria_d_1", "text": "x"},
                        {"id": "criteria_d_1", "text": "y"},
                    ]
                }
            },
            "sample[1]: id 'criteria_d_1' appears twice",
        ),
        (
            {"rubrics": {"sample": [{"id": "criteria_d_1", "text": "x", "status": "maybe"}]}},
            "status",
        ),
    ],
)
def test_invalid_dialogues_name_the_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        Dialogue.model_validate(_dialogue(**changes))
    assert message in str(info.value)
