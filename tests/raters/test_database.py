"""Opening the rater database and syncing a study into it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.raters.study_builder import make_study, write_tone
from voxeval.errors import ConfigError
from voxeval.raters.database import database_url, open_database, sync_study
from voxeval.raters.schema import items_table
from voxeval.raters.study.study_files import load_study_config, load_study_items


def _sync(study: Path, db: str | None = None) -> dict[str, int]:
    config = load_study_config(study)
    engine = open_database(database_url(study, db))
    try:
        return sync_study(engine, study, config, load_study_items(study, config))
    finally:
        engine.dispose()


def test_urls() -> None:
    assert database_url(Path("/s"), "postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url(Path("/s"), None) == "sqlite:////s/study.db"
    assert database_url(Path("/s"), "sqlite:///x.db") == "sqlite:///x.db"


def test_sync_is_idempotent_and_adds_new_items(tmp_path: Path) -> None:
    study = make_study(tmp_path / "s", "arena", items=2)
    assert _sync(study) == {"added": 2, "updated": 0, "retired": 0}
    assert _sync(study) == {"added": 0, "updated": 0, "retired": 0}
    lines = (study / "items.jsonl").read_text().splitlines()
    new = json.loads(lines[0])
    new["item_id"] = "item-new"
    for stimulus in new["stimuli"]:
        stimulus["path"] = stimulus["path"].replace("item-0", "item-new")
        write_tone(study / stimulus["path"], 500)
    (study / "items.jsonl").write_text("\n".join([lines[1], json.dumps(new)]) + "\n")
    assert _sync(study) == {"added": 1, "updated": 0, "retired": 1}
    engine = open_database(database_url(study, None))
    with engine.connect() as conn:
        targets = dict(
            conn.execute(select(items_table.c.item_id, items_table.c.target_raters)).all()
        )
    assert targets == {"item-0": 0, "item-1": 3, "item-new": 3}


def test_a_changed_task_is_refused(tmp_path: Path) -> None:
    study = make_study(tmp_path / "s", "arena", items=1)
    _sync(study)
    yaml_path = study / "study.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("task: arena", "task: score"))
    with pytest.raises(ConfigError, match=r"study.yaml: field 'task'.*'arena', not 'score'"):
        _sync(study)


def test_postgres_database(tmp_path: Path, postgres_url: str) -> None:
    study = make_study(tmp_path / "s", "score", items=2)
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    assert _sync(study, url)["added"] == 2
    assert _sync(study, url)["added"] == 0
