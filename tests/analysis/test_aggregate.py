from __future__ import annotations

import pytest

from voxeval.analysis.aggregate import standard_summary
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
        assert {"mean", "ci_low", "ci_high", "n", "clusters", "method"} <= set(stat)
    assert s["statistics"]["unit"] == "item" and s["statistics"]["clusters"] == 3


def test_requested_metrics_missing_are_reported() -> None:
    summary = standard_summary([row("a", "score", 1.0)], ["score", "wer"])
    assert summary["s"]["not_run"] == {"wer": "no scores stored for this metric"}


def query_rows(metric: str = "score", **kw: object) -> list[ScoreRow]:
    """Three queries x 2 voices x 2 trials; the voices of a query score alike."""
    rows = []
    for q, base in (("q1", 1.0), ("q2", 2.0), ("q3", 3.0)):
        for voice in ("f", "m"):
            for trial in (0, 1):
                value = base + (0.01 if voice == "m" else 0.0)
                rows.append(row(f"{q}__{voice}__clean", metric, value, trial=trial, **kw))
    return rows


def test_clusters_resample_whole_queries() -> None:
    rows = query_rows()
    clusters = {r.item_id: r.item_id.split("__")[0] for r in rows}
    by_query = standard_summary(rows, seed=0, clusters=clusters, cluster_unit="query")["s"]
    by_item = standard_summary(rows, seed=0)["s"]
    q, i = by_query["overall"]["score"], by_item["overall"]["score"]
    assert q["mean"] == i["mean"] == pytest.approx(2.005) and q["n"] == i["n"] == 12
    assert q["clusters"] == 3 and i["clusters"] == 6
    # 3 queries: P(all draws the same query) = 1/27 > 2.5%, so the interval spans q1..q3.
    assert (q["ci_low"], q["ci_high"]) == pytest.approx((1.005, 3.005))
    assert q["ci_high"] - q["ci_low"] > i["ci_high"] - i["ci_low"]
    assert by_query["statistics"] == {
        "unit": "query",
        "clusters": 3,
        "resamples": 2000,
        "confidence": 0.95,
        "rate_metrics": [],
    }


def test_summary_is_invariant_to_row_order() -> None:
    rows = [*query_rows(), row("q9__f__clean", "ok", 1.0, passed=True)]
    clusters = {r.item_id: r.item_id.split("__")[0] for r in rows}
    forward = standard_summary(rows, seed=3, clusters=clusters)
    assert standard_summary(rows[::-1], seed=3, clusters=clusters) == forward


def test_pass_fail_metrics_get_wilson_and_threshold_metrics_a_pass_rate() -> None:
    rows = [
        row(f"sc{i}", "task_completion", float(i % 2), passed=bool(i % 2), trial=t)
        for i in range(4)
        for t in range(3)
    ] + [row(f"sc{i}", "turn_taking", 0.2 * i, passed=i >= 2) for i in range(4)]
    s = standard_summary(rows, seed=0, cluster_unit="scenario")["s"]
    tc = s["overall"]["task_completion"]
    assert tc["method"] == "wilson" and tc["mean"] == 0.5 and tc["n"] == 12
    # trials of a scenario agree: 12 trials carry the information of 4 scenarios
    assert tc["clusters"] == 4 and tc["n_eff"] == pytest.approx(4.0)
    assert (tc["ci_low"], tc["ci_high"]) == pytest.approx((0.1500, 0.8500), abs=5e-5)
    assert s["overall"]["turn_taking"]["method"] == "cluster_bootstrap"
    assert s["pass_rates"]["turn_taking"]["mean"] == 0.5
    assert s["pass_rates"]["turn_taking"]["method"] == "wilson"
    assert "task_completion" not in s["pass_rates"]  # its mean already is the pass rate
    assert s["statistics"]["rate_metrics"] == ["task_completion"]
    # the same method in every grouping, even where a group happens to be all 0 or all 1
    for group in s["by_condition"].values():
        assert group["task_completion"]["method"] == "wilson"


def test_all_equal_metric_reports_the_reason() -> None:
    rows = [row(f"q{i}", "wer", 0.0) for i in range(5)]
    stat = standard_summary(rows)["s"]["overall"]["wer"]
    assert stat["mean"] == 0.0 and stat["ci_low"] is None and stat["ci_high"] is None
    assert stat["ci_note"] == "all values equal"
