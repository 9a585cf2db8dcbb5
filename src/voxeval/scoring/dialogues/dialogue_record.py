"""What the multi-turn metrics score: one stored dialogue (a system's replies to every user
turn) with the dialogue's accepted rubric criteria, and the resources those metrics use.

The record extends ``DialogueReplies`` (the replies alone), so the metrics written for that
(``content_density``) score a multi-turn run's dialogues as well."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from voxeval.audio import Audio
from voxeval.scoring.dialogues.dialogue_replies import DialogueReplies, DialogueTurnReply
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
    # the dataset's own judge prompts (``rubric_prompt_general``, ``rubric_prompt_specific``,
    # ``arena_prompt``) when the suite carries them
    prompts: Mapping[str, str] = field(default_factory=dict)


RubricMode = Literal["text", "audio"]
RubricProtocol = Literal["voxeval", "reference"]
# (record, k) -> the dialogue's first k turns as the audio judge hears them
Hear = Callable[[DialogueRecord, int], Audio]


@dataclass
class DialogueScoringResources:
    """``judge`` and ``audio_judge`` are called lazily and raise ``ProviderUnavailable``
    without one. ``rubric_mode``: what the rubric judge gets (``text``: the annotated
    transcript; ``audio``: the dialogue's audio, rendered by ``hear``); ``rubric_protocol``:
    voxeval's one call with every criterion, or the reference's two calls (general and
    sample prompts)."""

    judge: Callable[[], Judge]
    audio_judge: Callable[[], Judge] | None = None
    hear: Hear | None = None
    rubric_mode: RubricMode = "text"
    rubric_protocol: RubricProtocol = "voxeval"
