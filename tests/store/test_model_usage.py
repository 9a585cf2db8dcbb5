"""Usage by model: a component's ledger entry is stored as one usage row (with its audio
totals) and one model_usage row per model; an index written before audio was accounted
gains the columns and the table in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from voxeval.protocols.contract import WorkUnit
from voxeval.providers.usage.usage_ledger import ComponentUsage
from voxeval.providers.usage.usage_meter import ModelUsage
from voxeval.store import RunStore


def unit(item: str, system: str = "sys") -> WorkUnit:
    return WorkUnit(item, system, 0, "clean", category="cat")


def test_a_component_is_stored_with_audio_totals_and_one_row_per_model(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    used = ComponentUsage(calls=1, requests=2, prompt_tokens=30)
    used.add_model_usage(("asr", "openai", "whisper-1"), ModelUsage(calls=1, audio_in_s=2.5))
    used.add_model_usage(
        ("audio_llm", "openai", "gpt-4o-audio"),
        ModelUsage(calls=1, requests=2, prompt_tokens=30, prompt_audio_tokens=20, audio_out_s=4.0),
    )
    store.recorder.record_component_usage(unit("a"), "system:sys", used)
    store.recorder.record_component_usage(unit("b"), "system:sys", used)
    usage = store.usage.summary()
    component = usage["by_provider"]["system:sys"]
    assert (component["audio_in_s"], component["audio_out_s"]) == (5.0, 8.0)
    assert component["prompt_audio_tokens"] == 40 and component["calls"] == 2
    model = usage["by_model"]["audio_llm:openai:gpt-4o-audio"]
    assert (model["calls"], model["requests"], model["prompt_tokens"]) == (2, 4, 60)
    assert model["components"] == ["system:sys"]
    assert usage["by_model"]["asr:openai:whisper-1"]["audio_in_s"] == 5.0
    rows = store.usage.model_rows()
    assert [r["unit_key"] for r in rows] == [unit("a").key] * 2 + [unit("b").key] * 2
    store.reset()
    assert store.usage.model_rows() == []


OLD_USAGE = """
CREATE TABLE usage (id INTEGER NOT NULL PRIMARY KEY, run_id VARCHAR(200) NOT NULL,
  unit_key VARCHAR(1000) NOT NULL, system VARCHAR(200) NOT NULL,
  provider VARCHAR(200) NOT NULL, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL, cost_usd FLOAT, parse_failures INTEGER NOT NULL,
  recorded_at DATETIME NOT NULL, requests INTEGER, retries INTEGER, timeouts INTEGER);
"""


def test_an_old_index_gains_the_audio_columns_and_the_model_table(tmp_path: Path) -> None:
    first = RunStore(tmp_path)
    run_id = first.run_id
    first.close()
    (tmp_path / "index.sqlite").unlink()
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        db.executescript(OLD_USAGE)
        db.execute(
            "INSERT INTO usage VALUES (1, ?, 'a|clean|sys|0', 'sys', 'judge', 4, 10, 2, NULL, 0, "
            "'2026-01-01 00:00:00', 4, 0, 0)",
            (run_id,),
        )
    store = RunStore(tmp_path)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(usage)")}
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"audio_in_s", "audio_out_s", "prompt_audio_tokens", "completion_audio_tokens"} <= (
        columns
    )
    assert "model_usage" in tables
    judge = store.usage.summary()["by_provider"]["judge"]
    assert (judge["calls"], judge["audio_in_s"], judge["prompt_audio_tokens"]) == (4, 0, 0)
    used = ComponentUsage(calls=1)
    used.add_model_usage(("llm", "openai", "m"), ModelUsage(calls=1, prompt_tokens=5))
    store.recorder.record_component_usage(unit("b"), "judge", used)
    summary = store.usage.summary()
    assert summary["by_provider"]["judge"]["calls"] == 5
    assert summary["by_model"]["llm:openai:m"]["prompt_tokens"] == pytest.approx(5)
