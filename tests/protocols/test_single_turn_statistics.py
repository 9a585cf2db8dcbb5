"""The single-turn summary resamples whole queries (all voices, conditions and trials), read
from a real run folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.protocols.stored_runs import stored_context
from voxeval.benchmarks.build_manifest import RenderJob
from voxeval.benchmarks.wildspeech.spoken_query import SpeakerSpec, SpokenQuery
from voxeval.protocols.single_turn_summary import query_id_from_item, summarize_single_turn
from voxeval.store.records import ScoreRow


@pytest.mark.parametrize("query_id", ["q1", "wild__07", "a.b-c_d"])
@pytest.mark.parametrize(
    "profile",
    [SpeakerSpec(), SpeakerSpec(gender="female", age="adult", timbre="bright")],
)
@pytest.mark.parametrize("condition", ["clean", "natural_noise"])
def test_query_id_is_read_back_from_the_builders_item_key(
    query_id: str, profile: SpeakerSpec, condition: str
) -> None:
    job = RenderJob(SpokenQuery(id=query_id, text="hi", category="II"), profile, condition)
    assert query_id_from_item(job.key, condition) == query_id


def test_other_item_ids_are_their_own_query() -> None:
    assert query_id_from_item("q1", "clean") == "q1"
    assert query_id_from_item("q1__clean", "clean") == "q1__clean"


def rows_for(queries: dict[str, float]) -> list[ScoreRow]:
    rows = []
    for query, base in queries.items():
        for voice in ("female-adult", "male-senior"):
            for condition in ("clean", "human_noise"):
                for trial in (0, 1):
                    item = f"{query}__{voice}__{condition}"
                    for metric, value, passed in (
                        ("checklist", base + 0.1 * trial, None),
                        ("mos", base / 2, None),
                        ("language", 1.0 if base > 5 else 0.0, base > 5),
                    ):
                        rows.append(
                            ScoreRow(item, "s", trial, condition, "II", metric, value, passed, None)
                        )
    return rows


def test_summary_clusters_by_query(tmp_path: Path) -> None:
    rows = rows_for({"q1": 3.0, "q2": 6.0, "q3": 8.0, "q4": 4.0})
    metrics = ["checklist", "mos", "language"]
    ctx = stored_context(tmp_path, rows, metrics)
    parsed = summarize_single_turn(ctx, metrics, {}, {})
    manifest = {r.item_id: r.item_id.split("__")[0] for r in rows}
    given = summarize_single_turn(ctx, metrics, {}, {}, query_ids=manifest)
    assert parsed == given
    entry = given["s"]
    assert entry["units"]["done"] == 32  # 4 queries x 2 voices x 2 conditions x 2 trials
    assert entry["statistics"]["unit"] == "query" and entry["statistics"]["clusters"] == 4
    checklist = entry["overall"]["checklist"]
    assert checklist["n"] == 32 and checklist["clusters"] == 4
    assert entry["by_condition"]["clean"]["checklist"]["clusters"] == 4
    assert entry["mos_by_category"]["II"]["clusters"] == 4
    language = entry["overall"]["language"]
    # 8 identical outcomes per query: 32 replies carry the information of 4 queries
    assert language["method"] == "wilson" and language["n_eff"] == pytest.approx(4.0)
    assert entry["statistics"]["rate_metrics"] == ["language"]
