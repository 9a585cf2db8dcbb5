from __future__ import annotations

import pytest

from voxeval.report.aggregate import standard_summary
from voxeval.store.records import ScoreRow


def row(item: str, metric: str, value: float | None, **kw: object) -> ScoreRow:
    fields: dict[str, object] = {
        "item_id": item,
        "system": "s",
        "trial": 0,
        "condition": "clean",
        "category": "II",
        "metric": metric,
        "value": value,
        "passed": None,
        "error": None if value is not None else "no judge configured",
        "details": {},
    }
    fields.update(kw)
    return ScoreRow(**fields)  # type: ignore[arg-type]


def test_summary_groups_and_not_run() -> None:
    rows = [
        row("a", "score", 8.0),
        row("b", "score", 6.0, category="SR", condition="human_noise"),
        row("c", "score", 4.0, category="SR"),
        row("a", "judge", None),
        row("b", "judge", None),
        row("a", "mos", 3.0),
        row("b", "mos", None, error="audio too short"),
    ]
    summary = standard_summary(rows, seed=0, units={"s": {"done": 3, "failed": 1}, "t": {}})
    s = summary["s"]
    assert s["overall"]["score"]["mean"] == pytest.approx(6.0) and s["overall"]["score"]["n"] == 3
    assert s["by_category"]["SR"]["score"]["mean"] == pytest.approx(5.0)
    assert s["by_condition"]["human_noise"]["score"]["n"] == 1
    assert s["not_run"] == {"judge": "no judge configured"}
    assert "judge" not in s["overall"]
    assert s["partial"] == {"mos": {"not_run": 1, "reason": "audio too short"}}
    assert s["units"] == {"done": 3, "failed": 1, "pending": 0}
    assert summary["t"]["overall"] == {} and summary["t"]["units"]["done"] == 0
    for stat in s["overall"].values():
        assert set(stat) == {"mean", "ci_low", "ci_high", "n"}


def test_requested_metrics_missing_are_reported() -> None:
    summary = standard_summary([row("a", "score", 1.0)], ["score", "wer"])
    assert summary["s"]["not_run"] == {"wer": "no scores stored for this metric"}
