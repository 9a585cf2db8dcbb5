"""How a run folder is read for comparisons: independent units per protocol, suite version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.compare_runs_fixtures import stored_run
from voxeval.report.run_compare import compare_runs
from voxeval.report.run_source import cluster_function, open_run_source, stored_query_ids
from voxeval.store.records import ScoreRow


def test_single_turn_items_of_one_query_form_one_unit() -> None:
    by_id = cluster_function("single_turn")
    assert by_id("q1__adult_f1__clean", "clean") == "q1"
    assert by_id("odd-id", "clean") == "odd-id"
    from_manifest = cluster_function("single_turn", {"r7": "q9"})
    assert from_manifest("r7", "clean") == "q9"
    assert cluster_function("live_call")("s1__x__clean", "clean") == "s1__x__clean"


def test_query_ids_are_read_from_the_runs_scores_csv(tmp_path: Path) -> None:
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "scores.csv").write_text(
        "item_id,query_id,system\nr1,q1,a\nr2,,a\n", encoding="utf-8"
    )
    assert stored_query_ids(tmp_path) == {"r1": "q1"}
    assert stored_query_ids(tmp_path / "nowhere") == {}


def _checklist(item: str, value: float) -> ScoreRow:
    return ScoreRow(item, "a", 0, "clean", "II", "checklist", value, None, None)


def test_single_turn_deltas_are_averaged_within_the_query(tmp_path: Path) -> None:
    items = ["q1__p1__clean", "q1__p2__clean", "q2__p1__clean", "q2__p2__clean"]
    base = stored_run(tmp_path, "base", [_checklist(i, 5.0) for i in items], protocol="single_turn")
    after = stored_run(
        tmp_path, "after", [_checklist(i, v) for i, v in zip(items, (7, 8, 4, 6), strict=True)],
        protocol="single_turn",
    )  # fmt: skip
    entry = compare_runs([base, after]).systems["a"]["metrics"]["checklist"]
    (c,) = entry["comparisons"]
    assert c["paired_items"] == 4 and c["paired_clusters"] == 2
    assert [i["cluster"] for i in c["items"]] == ["q1", "q1", "q2", "q2"]
    # per query: q1 (2 + 3) / 2 = 2.5, q2 (-1 + 1) / 2 = 0; the mean over queries is 1.25
    assert c["delta"]["mean"] == pytest.approx(1.25)
    assert c["p_value"] == pytest.approx(1.0)  # two queries, one zero: both signs tie
    source = open_run_source(after)
    assert source.cluster_unit == "query" and source.suite_version == "1.0"
