"""The usage table counts HTTP requests, retries and timeouts next to logical calls; an index
written before they were counted gains the columns in place and its old rows count 0."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from voxeval.protocols.contract import WorkUnit
from voxeval.report.markdown import render_markdown
from voxeval.store import RunStore


def unit(item: str, system: str = "sys") -> WorkUnit:
    return WorkUnit(item, system, 0, "clean", category="cat")


def test_requests_retries_and_timeouts_are_summed_per_provider_and_system(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path)
    store.recorder.record_usage(
        unit("a"), "judge", 3, 100, 10, None, requests=5, retries=2, timeouts=1
    )
    store.recorder.record_usage(unit("b"), "judge", 2, 50, 5, None, requests=0)  # cache hits
    store.recorder.record_usage(unit("b", "s2"), "system:s2", 1, 0, 0, None, requests=4, retries=3)
    usage = store.usage.summary()
    assert {k: usage["by_provider"]["judge"][k] for k in ("calls", "requests", "retries")} == {
        "calls": 5,
        "requests": 5,
        "retries": 2,
    }
    assert usage["by_provider"]["judge"]["timeouts"] == 1
    assert usage["by_system"]["s2"]["requests"] == 4 and usage["by_system"]["s2"]["retries"] == 3
    assert (usage["total"]["requests"], usage["total"]["retries"]) == (9, 5)


OLD_USAGE = """
CREATE TABLE usage (id INTEGER NOT NULL PRIMARY KEY, run_id VARCHAR(200) NOT NULL,
  unit_key VARCHAR(1000) NOT NULL, system VARCHAR(200) NOT NULL,
  provider VARCHAR(200) NOT NULL, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL, cost_usd FLOAT, parse_failures INTEGER NOT NULL,
  recorded_at DATETIME NOT NULL);
"""


def test_an_old_usage_table_gains_the_request_columns(tmp_path: Path) -> None:
    first = RunStore(tmp_path)
    run_id = first.run_id
    first.close()
    (tmp_path / "index.sqlite").unlink()
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        db.executescript(OLD_USAGE)
        db.execute(
            "INSERT INTO usage VALUES (1, ?, 'a|clean|sys|0', 'sys', 'judge', 4, 10, 2, 0.5, 0, "
            "'2026-01-01 00:00:00')",
            (run_id,),
        )
    store = RunStore(tmp_path)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(usage)")}
    assert {"requests", "retries", "timeouts"} <= columns
    store.recorder.record_usage(
        unit("b"), "judge", 1, 5, 1, None, requests=3, retries=2, timeouts=1
    )
    judge = store.usage.summary()["by_provider"]["judge"]
    assert (judge["calls"], judge["requests"], judge["retries"], judge["timeouts"]) == (5, 3, 2, 1)


def test_the_report_shows_requests_retries_and_timeouts() -> None:
    usage = {"calls": 4, "requests": 9, "retries": 5, "timeouts": 2, "cost_usd": None}
    summary = {
        "run_id": "r",
        "suite": {"name": "s", "protocol": "single_turn"},
        "systems": {},
        "usage": {"by_provider": {"judge": usage}, "total": usage},
    }
    md = render_markdown(summary)
    assert "| provider | calls | requests | retries | timeouts |" in md
    assert "| judge | 4 | 9 | 5 | 2 |" in md
