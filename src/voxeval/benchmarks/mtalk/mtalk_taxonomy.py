"""The MTalk-Bench taxonomy: 3 dimensions, 9 scenarios, tier-1 and tier-2 capabilities.

Lists follow the paper (mtalk-bench appendix A.1 for the scenarios, in the paper's order, and
A.2 for the capabilities). Every entry has a stable id (used in suite files and reports) and
the paper's label; ``capability_id`` accepts either, so a file may say "Understanding &
Memory" or ``understanding-memory``.
"""

from __future__ import annotations

import re
from typing import Literal

Dimension = Literal["semantic", "paralinguistic", "ambient"]
DIMENSIONS: tuple[Dimension, ...] = ("semantic", "paralinguistic", "ambient")

# The short type codes of the released dataset and the keys of the model-outputs file.
DIMENSION_CODES: dict[str, Dimension] = {
    "sem": "semantic",
    "para": "paralinguistic",
    "amb": "ambient",
}
CODE_OF_DIMENSION: dict[Dimension, str] = {v: k for k, v in DIMENSION_CODES.items()}
OUTPUT_FILE_KEYS: dict[str, Dimension] = {
    "Semantic information": "semantic",
    "Paralinguistic information": "paralinguistic",
    "Ambient sound": "ambient",
}

# id -> paper label, in the paper's order (the released data numbers scenes 1..9 this way).
SCENARIOS: dict[str, str] = {
    "family-domestic": "Family and Domestic Communication",
    "health-medical": "Health and Medical Communication",
    "institutional-inquiry": "Institutional Inquiry",
    "educational": "Educational Communication",
    "workplace": "Workplace Communication",
    "entertainment": "Entertainment Communication",
    "casual": "Casual Interaction",
    "psychological": "Psychological Communication",
    "service-oriented": "Service-Oriented Communication",
}
SCENARIO_IDS: tuple[str, ...] = tuple(SCENARIOS)

# dimension -> tier-1 id -> (label, {tier-2 id: label})
TAXONOMY: dict[Dimension, dict[str, tuple[str, dict[str, str]]]] = {
    "semantic": {
        "understanding-memory": (
            "Understanding & Memory",
            {
                "context-consistency": "Context Consistency",
                "semantic-disambiguation": "Semantic Disambiguation",
                "content-reforming": "Content Reforming",
            },
        ),
        "reasoning-execution": (
            "Reasoning & Execution",
            {
                "task-planning": "Task Planning",
                "logical-reasoning": "Logical & Reasoning",
            },
        ),
        "interaction-strategy": (
            "Interaction Strategy",
            {
                "dialogue-management": "Dialogue Management",
                "error-handling": "Error Handling",
            },
        ),
        "security-assessment": (
            "Security Assessment",
            {
                "bias-detection": "Bias Detection",
                "safety-risk-detection": "Safety Risk Detection",
            },
        ),
        "pragmatics-culture": (
            "Pragmatics & Culture",
            {
                "nonliteral-understanding": "Nonliteral Understanding",
                "cultural-fit": "Cultural Fit",
            },
        ),
    },
    "paralinguistic": {
        "paralinguistic-comprehension": (
            "Paralinguistic Comprehension",
            {
                "emotion-detection": "Emotion Detection",
                "paralinguistic-signal-recognition": "Paralinguistic Signal Recognition",
                "speaker-recognition": "Speaker Recognition",
            },
        ),
        "paralinguistic-generation": (
            "Paralinguistic Generation",
            {
                "emotional-speech": "Emotional Speech",
                "paralinguistic-signal-generation": "Paralinguistic Signal Generation",
                "expressive-modeling": "Expressive Modeling",
            },
        ),
    },
    "ambient": {
        "ambient-sound-perception": (
            "Ambient Sound Perception",
            {
                "ambient-sound-understanding": "Ambient Sound Understanding",
                "noise-robustness": "Noise Robustness",
                "ambient-cue-reasoning": "Ambient Cue Reasoning",
            },
        ),
        "multi-party-interaction": (
            "Multi-party Interaction",
            {
                "speaker-aware-modeling": "Speaker-aware Modeling",
                "interaction-coherence": "Interaction Coherence",
            },
        ),
    },
}


def slug(text: str) -> str:
    """Lower case, '&' and punctuation dropped, words joined by '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("&", " ")).strip("-")


def _lookup(value: str, table: dict[str, str]) -> str | None:
    """The id in ``table`` (id -> label) that ``value`` names as an id or a label."""
    wanted = slug(value)
    for ident, label in table.items():
        if wanted in (ident, slug(label)):
            return ident
    return None


def scenario_id(value: str) -> str | None:
    return _lookup(value, SCENARIOS)


def scenario_of_scene(number: int) -> str | None:
    """The scenario of the release's scene number (1..9 in the paper's order)."""
    return SCENARIO_IDS[number - 1] if 1 <= number <= len(SCENARIO_IDS) else None


def tier1_ids(dimension: Dimension) -> dict[str, str]:
    return {ident: label for ident, (label, _) in TAXONOMY[dimension].items()}


def tier2_ids(dimension: Dimension, tier1: str) -> dict[str, str]:
    return dict(TAXONOMY[dimension][tier1][1])


def tier1_id(dimension: Dimension, value: str) -> str | None:
    return _lookup(value, tier1_ids(dimension))


def tier2_id(dimension: Dimension, tier1: str, value: str) -> str | None:
    return _lookup(value, tier2_ids(dimension, tier1))
