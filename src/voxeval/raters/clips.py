"""How an item's clips appear on a rater's page: in dialogue order (per turn the user, then
the reply shown as A, then the one shown as B, after this rater's side swap) and under
opaque numbers, so neither the page nor the clip URLs reveal which system or side is which."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.raters.study.study_files import Stimulus, StudyItem

_ROLE_LABELS = {
    "user": "User",
    "query": "Query",
    "reply": "Reply",
    "example": "Example",
}


@dataclass(frozen=True)
class Clip:
    number: int  # 1-based position on the page; also the clip's URL and playback key
    stimulus: Stimulus
    label: str
    turn: int | None


def page_clips(item: StudyItem, swapped: bool) -> list[Clip]:
    def shown_side(role: str) -> str:
        if role in ("a", "b") and swapped:
            return "b" if role == "a" else "a"
        return role

    rank = {"user": 0, "query": 0, "example": 0, "a": 1, "b": 2, "reply": 1}
    ordered = sorted(
        enumerate(item.stimuli),
        key=lambda pair: (
            pair[1].turn if pair[1].turn is not None else 0,
            rank[shown_side(pair[1].role)],
            pair[0],
        ),
    )
    clips = []
    for number, (_, stimulus) in enumerate(ordered, start=1):
        side = shown_side(stimulus.role)
        label = f"Reply {side.upper()}" if side in ("a", "b") else _ROLE_LABELS[side]
        clips.append(Clip(number, stimulus, label, stimulus.turn))
    return clips


def clip_labels(clips: list[Clip]) -> dict[str, str]:
    """Stimulus id -> what the page calls it (for messages)."""
    return {
        c.stimulus.id: f"clip {c.number} ({c.label}{f', turn {c.turn}' if c.turn else ''})"
        for c in clips
    }
