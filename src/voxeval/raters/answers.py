"""Turn a submitted form into the stored answer of each task, refusing anything outside
the expected values (gold items are checked by ``gold_check``)."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONObject
from voxeval.raters.study.study_files import StudyItem

ARENA_CHOICES = ("a", "b", "tie", "both_bad")
MAX_REASON_CHARS = 2000
SCORE_RANGE = (1, 10)


class AnswerError(ValueError):
    """The form does not hold a valid answer; the message says which field."""


def _reason(form: Mapping[str, str]) -> str:
    reason = (form.get("reason") or "").strip()
    if len(reason) > MAX_REASON_CHARS:
        raise AnswerError(f"field 'reason': at most {MAX_REASON_CHARS} characters")
    return reason


def shown_systems(item: StudyItem, swapped: bool) -> tuple[str, str]:
    """The systems behind the sides the rater saw as A and B."""
    a, b = item.systems.get("a", ""), item.systems.get("b", "")
    return (b, a) if swapped else (a, b)


def unswap(choice: str, swapped: bool) -> str:
    """A choice of the side the rater saw, as a side of the item file."""
    if swapped and choice in ("a", "b"):
        return "b" if choice == "a" else "a"
    return choice


def parse_answer(
    task: str, item: StudyItem, form: Mapping[str, str], *, swapped: bool
) -> JSONObject:
    """The answer to store for an arena, rubric or score form."""
    if task == "arena":
        choice = form.get("choice", "")
        if choice not in ARENA_CHOICES:
            raise AnswerError(f"field 'choice': one of {', '.join(ARENA_CHOICES)}")
        first, second = shown_systems(item, swapped)
        winner = {"a": first, "b": second}.get(choice, choice)
        return {
            "choice": choice,
            "item_choice": unswap(choice, swapped),
            "winner": winner,
            "first": first,
            "second": second,
            "reason": _reason(form),
        }
    if task == "rubric":
        criteria: JSONObject = {}
        for criterion in item.criteria:
            value = form.get(f"criterion-{criterion.id}")
            if value not in (None, "1"):
                raise AnswerError(f"field 'criterion-{criterion.id}': a checkbox (1 or absent)")
            criteria[criterion.id] = 1 if value == "1" else 0
        return {
            "system": item.systems.get("reply", ""),
            "criteria": criteria,
            "reason": _reason(form),
        }
    if task == "score":
        raw = form.get("score", "")
        low, high = SCORE_RANGE
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise AnswerError(f"field 'score': a whole number from {low} to {high}")
        return {"system": item.systems.get("reply", ""), "score": int(raw), "reason": _reason(form)}
    raise AnswerError(f"task {task!r} takes no form answer")
