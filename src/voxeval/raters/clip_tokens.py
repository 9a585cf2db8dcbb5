"""Blinding of the clip URLs: a page fetches each clip as ``/clip/<token>``, where the token
is random per assignment and stimulus (stored in ``rater_clip_tokens``). Nothing about the
item, the side or the system can be computed from it, and the server hands a clip only to
the rater whose assignment it belongs to, while that assignment is unanswered: a rater can
never fetch another item's stimuli, another rater's, or a gold item's ahead of time."""

from __future__ import annotations

import secrets

from sqlalchemy import Engine, insert, select
from sqlalchemy.engine import Connection

from voxeval.raters.database import retrying, transaction
from voxeval.raters.schema import (
    ITEM_OF_ASSIGNMENT,
    assignments_table,
    clip_tokens_table,
    items_table,
    rater_assignment,
)
from voxeval.raters.study.study_files import Stimulus, StudyItem

TOKEN_BYTES = 24  # 192 random bits, 32 URL-safe characters


def ensure_clip_tokens(
    conn: Connection, assignment_id: int, stimulus_ids: list[str]
) -> dict[str, str]:
    """Stimulus id -> token for this assignment, creating the missing ones."""
    tokens = {
        row.stimulus_id: row.token
        for row in conn.execute(
            select(clip_tokens_table.c.stimulus_id, clip_tokens_table.c.token).where(
                clip_tokens_table.c.assignment_id == assignment_id
            )
        )
    }
    missing = [s for s in stimulus_ids if s not in tokens]
    if missing:
        new = {s: secrets.token_urlsafe(TOKEN_BYTES) for s in missing}
        conn.execute(
            insert(clip_tokens_table),
            [
                {"token": t, "assignment_id": assignment_id, "stimulus_id": s}
                for s, t in new.items()
            ],
        )
        tokens.update(new)
    return tokens


def current_clip(engine: Engine, study_id: str, rater_id: str, token: str) -> Stimulus | None:
    """The stimulus behind ``token`` when it belongs to this rater's unanswered assignment
    (their current item); None otherwise."""
    if not token or len(token) > 64:
        return None

    def work() -> Stimulus | None:
        with transaction(engine) as conn:
            row = conn.execute(
                select(clip_tokens_table.c.stimulus_id, items_table.c.payload)
                .join(
                    assignments_table,
                    assignments_table.c.assignment_id == clip_tokens_table.c.assignment_id,
                )
                .join(items_table, ITEM_OF_ASSIGNMENT)
                .where(clip_tokens_table.c.token == token)
                .where(rater_assignment(study_id, rater_id))
                .where(assignments_table.c.status != "done")
            ).first()
        if row is None:
            return None
        item = StudyItem.model_validate(row.payload)
        return next((s for s in item.stimuli if s.id == row.stimulus_id), None)

    return retrying(work)
