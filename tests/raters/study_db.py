"""Fill a study database by hand through the schema tables, as the serving app would: the
study row, its items, rater accounts, one assignment per answer and the response."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, insert

from voxeval.raters.schema import (
    accounts_table,
    assignments_table,
    items_table,
    metadata,
    responses_table,
    studies_table,
)
from voxeval.raters.study.study_files import load_study_config, load_study_items

START = datetime(2026, 1, 1, tzinfo=UTC)


def fill_study_db(
    url: str, study_dir: Path, answers: Sequence[tuple[str, str, dict[str, Any]]]
) -> None:
    """``answers``: (rater, item_id, answer) in submission order."""
    config = load_study_config(study_dir)
    items = load_study_items(study_dir, config)
    engine = create_engine(url)
    metadata.create_all(engine)
    raters = sorted({rater for rater, _, _ in answers})
    with engine.begin() as conn:
        conn.execute(
            insert(studies_table).values(
                study_id=config.study_id,
                task=config.task,
                config=config.model_dump(mode="json"),
                created_at=START,
            )
        )
        conn.execute(
            insert(items_table),
            [
                {
                    "study_id": config.study_id,
                    "item_id": item.item_id,
                    "kind": item.kind,
                    "target_raters": config.raters_per_item,
                    "payload": item.model_dump(mode="json"),
                }
                for item in items
            ],
        )
        conn.execute(
            insert(accounts_table),
            [
                {
                    "study_id": config.study_id,
                    "rater_id": rater,
                    "role": "rater",
                    "token_sha256": hashlib.sha256(f"token-{rater}".encode()).hexdigest(),
                    "created_at": START,
                    "disabled": False,
                }
                for rater in raters
            ],
        )
    for n, (rater, item_id, answer) in enumerate(answers):
        at = START + timedelta(seconds=10 * n)
        with engine.begin() as conn:  # one transaction per answer, as the app commits them
            assignment = conn.execute(
                insert(assignments_table).values(
                    study_id=config.study_id,
                    rater_id=rater,
                    item_id=item_id,
                    position=n,
                    swap_sides=bool(n % 2),
                    issued_at=at,
                    status="done",
                )
            ).inserted_primary_key[0]
            conn.execute(
                insert(responses_table).values(
                    study_id=config.study_id,
                    item_id=item_id,
                    rater_id=rater,
                    assignment_id=assignment,
                    task=config.task,
                    answer=answer,
                    seconds_on_page=12.5,
                    submitted_at=at,
                    gold_correct=None,
                )
            )
    engine.dispose()
