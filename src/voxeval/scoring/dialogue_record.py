"""What the multi-turn metrics score: one stored dialogue (a system's replies to every user
turn) with the dialogue's accepted rubric criteria, and the resources those metrics use.

The record extends ``DialogueReplies`` (the replies alone), so the metrics written for that
(``content_density``) score a multi-turn run's dialogues as well."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from voxeval.scoring.dialogue_replies import DialogueReplies, DialogueTurnReply
from voxeval.scoring.judge import Judge

DialogueTurn = DialogueTurnReply
"""One exchange: ``index`` (from 1), ``user_text`` (annotations kept) and ``reply_text`` (the
system's text channel, or a transcript of its audio; None when it gave nothing)."""


@dataclass(frozen=True)
class RubricCriterion:
    id: str
    level: str  # general, dimension or sample
    text: str


@dataclass(frozen=True)
class DialogueRecord(DialogueReplies):
    dimension: str = ""
    tier1: str | None = None
    criteria: tuple[RubricCriterion, ...] = ()
    unit_dir: Path | None = None


@dataclass
class DialogueScoringResources:
    """``judge`` is called lazily and raises ``ProviderUnavailable`` without a judge."""

    judge: Callable[[], Judge]
