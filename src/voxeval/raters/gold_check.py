"""Is an answer to a gold item right? The known answers are written by ``study_gold``:
arena ``{"choice": "a"|"b"}`` (the side in the item's own terms, before any per-rater swap;
the answer's ``winner`` names the system, so the swap does not matter), rubric
``{"criteria": {id: 0|1}}`` (every criterion as given), score ``{"min", "max"}``."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.raters.study.study_files import StudyItem


def gold_correct(item: StudyItem, answer: JSONReadObject) -> bool | None:
    """True / False for a gold item's answer; None when the item is not gold."""
    gold = item.gold
    if item.kind != "gold" or not gold:
        return None
    if "choice" in gold:
        expected = item.systems.get(str(gold["choice"]), gold["choice"])
        return answer.get("winner") == expected
    if "criteria" in gold:
        given = answer.get("criteria")
        marks = given if isinstance(given, Mapping) else {}
        return all(_mark(marks.get(cid, -1)) == int(v) for cid, v in gold["criteria"].items())
    if "min" in gold and "max" in gold:
        try:
            score = float(answer.get("score"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return float(gold["min"]) <= score <= float(gold["max"])
    return None


def _mark(value: JSONReadValue) -> int:
    """A criterion's mark as given (0 or 1; a value that is no number raises as int() does)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"a criterion's mark must be a number, got {value!r}")
