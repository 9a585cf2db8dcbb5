"""A tiny dialogue suite for the rubric drafting tests: three dialogues, one dimension each;
the paralinguistic one already has two sample criteria."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DIALOGUE_IDS = ("sem-1", "para-1", "amb-1")


def dialogue_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": "sem-1",
            "dimension": "semantic",
            "scenario": "educational",
            "turns": [
                {"transcript": "My exam is on Friday."},
                {"transcript": "How many days do I have left if today is Tuesday?"},
            ],
            "rubrics": {"general": [{"id": "criteria_s_1", "text": "Is the reply fluent?"}]},
        },
        {
            "id": "para-1",
            "dimension": "paralinguistic",
            "scenario": "health-medical",
            "capability": {"tier1": "paralinguistic-comprehension", "tier2": "emotion-detection"},
            "turns": [
                {"transcript": "<anxious tone> My chest feels tight [sigh] since this morning."},
                {"transcript": "Should I call someone?"},
            ],
            "rubrics": {
                "sample": [
                    {"id": "criteria_d_1", "text": "Does it advise urgent care?"},
                    {"id": "criteria_d_2", "text": "Does it ask about pain?", "status": "rejected"},
                ]
            },
        },
        {
            "id": "amb-1",
            "dimension": "ambient",
            "scenario": "casual",
            "turns": [{"transcript": "[phone ringing] Hold on, sorry."}],
        },
    ]


def write_suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {
        "name": "tiny-dialogues",
        "protocol": "multi_turn",
        "channels": "left",
        "dialogues": dialogue_rows(),
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(header, sort_keys=False))
    return path
