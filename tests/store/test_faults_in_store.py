"""The index keeps causes of failed units, system faults and pending scores; re-scores never
replace a good value; an index written by an older voxeval gains the new columns."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import RunStore


def unit(item: str, system: str = "sys") -> WorkUnit:
    return WorkUnit(item, system, 0, "clean", category="cat")


def test_causes_and_system_faults_are_counted_per_system(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a, b, c, d = unit("a"), unit("b"), unit("c"), unit("d", system="other")
    store.units.record_items([a, b, c, d])
    store.units.complete(a, {"m": Score(1.0)})
    store.units.complete(b, {"m": Score(0.0)}, system_fault="timeout", error="agent: no answer")
    store.units.record_failure(c, RuntimeError("renderer down"), cause="renderer")
    counts = store.units.status_counts()
    assert counts["sys"] == {
        "done": 2,
        "failed": 1,
        "pending": 0,
        "system_faults": {"timeout": 1},
        "failed_by_cause": {"renderer": 1},
        "pending_metrics": 0,
    }
    assert counts["other"]["pending"] == 1
    record = {u.item_id: u for u in store.units.records()}
    assert (record["b"].system_fault, record["b"].error) == ("timeout", "agent: no answer")
    assert record["c"].cause == "renderer"
    store.recorder.start(b)  # a new attempt forgets the previous outcome
    assert store.units.records("running")[0].system_fault is None


def test_pending_scores_are_stored_listed_and_replaced_when_they_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.units.complete(a, {"checklist": Score.pending_retry("judge down"), "wer": Score(0.1)})
    assert store.scores.pending_metrics() == {a.key: ["checklist"]}
    rows = {r.metric: r for r in store.scores.load()}
    assert rows["checklist"].pending and not rows["wer"].pending
    assert store.units.status_counts()["sys"]["pending_metrics"] == 1
    stored = json.loads((store.folder.unit_dir(a) / "scores.json").read_text())
    assert stored["checklist"]["pending"] is True
    assert store.scores.save(a, {"checklist": Score(6.0)}) == []
    assert store.scores.pending_metrics() == {}
    assert {r.metric: r.value for r in store.scores.load()} == {"checklist": 6.0, "wer": 0.1}


def test_a_rescore_never_replaces_a_value_that_ran(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.units.complete(a, {"checklist": Score(7.0), "mos": Score.not_run("no audio")})
    kept = store.scores.save(
        a,
        {
            "checklist": Score.pending_retry("judge down"),
            "mos": Score.not_run("still no audio"),
        },
    )
    assert kept == ["checklist"]
    rows = {r.metric: r for r in store.scores.load()}
    assert rows["checklist"].value == 7.0 and not rows["checklist"].pending
    assert rows["mos"].error == "still no audio"  # not-run may replace not-run
    stored = json.loads((store.folder.unit_dir(a) / "scores.json").read_text())
    assert stored["checklist"]["value"] == 7.0
    assert store.scores.save(a, {"checklist": Score(5.0)}) == []  # a new value replaces
    assert {r.metric: r.value for r in store.scores.load()}["checklist"] == 5.0


OLD_SCHEMA = """
CREATE TABLE units (run_id VARCHAR(200) NOT NULL, unit_key VARCHAR(1000) NOT NULL,
  seq INTEGER NOT NULL, item_id VARCHAR(500) NOT NULL, system VARCHAR(200) NOT NULL,
  trial INTEGER NOT NULL, condition VARCHAR(200) NOT NULL, category VARCHAR(200) NOT NULL,
  status VARCHAR(20) NOT NULL, error TEXT, attempts INTEGER NOT NULL, started_at DATETIME,
  finished_at DATETIME, PRIMARY KEY (run_id, unit_key));
CREATE TABLE scores (run_id VARCHAR(200) NOT NULL, unit_key VARCHAR(1000) NOT NULL,
  metric VARCHAR(200) NOT NULL, value FLOAT, passed INTEGER, error TEXT, details JSON,
  scored_at DATETIME NOT NULL, PRIMARY KEY (run_id, unit_key, metric));
"""


def test_an_index_from_an_older_version_gains_the_new_columns(tmp_path: Path) -> None:
    first = RunStore(tmp_path)  # creates run.yaml (run id); then replace its index
    run_id = first.run_id
    first.close()
    (tmp_path / "index.sqlite").unlink()
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        db.executescript(OLD_SCHEMA)
        db.execute(
            "INSERT INTO units VALUES (?, 'a|clean|sys|0', 1, 'a', 'sys', 0, 'clean', 'cat', "
            "'done', NULL, 1, NULL, NULL)",
            (run_id,),
        )
        db.execute(
            "INSERT INTO scores VALUES (?, 'a|clean|sys|0', 'wer', 0.25, NULL, NULL, NULL, "
            "'2026-01-01 00:00:00')",
            (run_id,),
        )
    store = RunStore(tmp_path)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        units_columns = {row[1] for row in db.execute("PRAGMA table_info(units)")}
        score_columns = {row[1] for row in db.execute("PRAGMA table_info(scores)")}
    assert {"cause", "system_fault"} <= units_columns and "pending" in score_columns
    [row] = store.scores.load()
    assert (row.metric, row.value, row.pending) == ("wer", 0.25, False)
    assert store.units.status_counts()["sys"]["done"] == 1
    store.units.complete(
        unit("b"), {"wer": Score.pending_retry("asr down")}, system_fault="timeout"
    )
    assert store.scores.pending_metrics() == {"b|clean|sys|0": ["wer"]}
    RunStore(tmp_path).close()  # opening again finds nothing to add
