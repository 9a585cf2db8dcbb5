"""What the multi-turn metrics score: one stored dialogue (a system's replies to every user
turn) with the dialogue's accepted rubric criteria, and the resources those metrics use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval.scoring.judge import Judge


@dataclass(frozen=True)
class RubricCriterion:
    id: str
    level: str  # general, dimension or sample
    text: str


@dataclass(frozen=True)
class DialogueTurn:
    """One exchange: what the user said (annotations kept) and what the system answered
    (its text channel, or a transcript of its audio; None when it gave nothing)."""

    index: int  # 1-based
    user_text: str
    reply_text: str | None


@dataclass(frozen=True)
class DialogueRecord:
    dialogue_id: str
    dimension: str
    tier1: str | None
    turns: tuple[DialogueTurn, ...]
    criteria: tuple[RubricCriterion, ...]
    unit_dir: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class DialogueScoringResources:
    """``judge`` is called lazily and raises ``ProviderUnavailable`` without a judge."""

    judge: Callable[[], Judge]
