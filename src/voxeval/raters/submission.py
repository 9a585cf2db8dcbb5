"""The rater's side of an assignment: opening its page (starts the server-side clock),
reporting playback, and submitting an answer. A submission is checked and stored in one
transaction — the assignment is the rater's, no earlier answer exists (409), the rater is
under the rate limit (429) and the listening gate passed (422) — and is committed before
the page moves on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from voxeval.json_types import JSONObject
from voxeval.raters.clip_tokens import ensure_clip_tokens
from voxeval.raters.clips import clip_labels, page_clips
from voxeval.raters.database import as_utc, retrying, transaction, utcnow
from voxeval.raters.gold_check import gold_correct
from voxeval.raters.quality_gate import PLAYBACK_EVENTS, GateStatus, gate_status
from voxeval.raters.schema import (
    ITEM_OF_ASSIGNMENT,
    assignments_table,
    items_table,
    playback_table,
    rater_assignment,
    responses_table,
)
from voxeval.raters.study.study_files import StudyConfig, StudyItem
from voxeval.web.ids import storable_id

MAX_PLAYBACK_EVENTS = 500  # per assignment: a page that keeps reporting is misbehaving


class Refused(Exception):
    """A request the server will not carry out; ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class OpenedItem:
    assignment_id: int
    item: StudyItem
    swapped: bool
    stimulus_order: list[str]
    gate: GateStatus
    answered: bool
    answer: dict[str, Any] | None
    clip_tokens: dict[str, str]  # stimulus id -> its opaque URL token (empty once answered)


def _assignment(conn: Connection, study_id: str, rater_id: str, assignment_id: int) -> Row[Any]:
    if not storable_id(assignment_id):  # no such row, and the database would overflow
        raise Refused(404, "No such item for you.")
    row = conn.execute(
        select(assignments_table, items_table.c.payload)
        .join(items_table, ITEM_OF_ASSIGNMENT)
        .where(assignments_table.c.assignment_id == assignment_id)
        .where(rater_assignment(study_id, rater_id))
    ).first()
    if row is None:
        raise Refused(404, "No such item for you.")
    return row


def _response(conn: Connection, study_id: str, item_id: str, rater_id: str) -> Row[Any] | None:
    return conn.execute(
        select(responses_table)
        .where(responses_table.c.study_id == study_id)
        .where(responses_table.c.item_id == item_id)
        .where(responses_table.c.rater_id == rater_id)
    ).first()


def open_item(engine: Engine, config: StudyConfig, rater_id: str, assignment_id: int) -> OpenedItem:
    """Load an assignment for its page; the first opening starts the time-on-page clock."""

    def work() -> OpenedItem:
        now = utcnow()
        with transaction(engine) as conn:
            row = _assignment(conn, config.study_id, rater_id, assignment_id)
            opened = row.page_opened_at
            if opened is None:
                conn.execute(
                    update(assignments_table)
                    .where(assignments_table.c.assignment_id == assignment_id)
                    .values(page_opened_at=now)
                )
                opened = now
            item = StudyItem.model_validate(row.payload)
            response = _response(conn, config.study_id, row.item_id, rater_id)
            gate = gate_status(conn, assignment_id, item, opened, config.min_time_factor, now)
            tokens = (
                {}
                if response is not None
                else ensure_clip_tokens(conn, assignment_id, [s.id for s in item.stimuli])
            )
            return OpenedItem(
                assignment_id,
                item,
                bool(row.swap_sides),
                list(row.stimulus_order or [s.id for s in item.stimuli]),
                gate,
                response is not None,
                dict(response.answer) if response is not None else None,
                tokens,
            )

    try:
        return retrying(work)
    except IntegrityError:  # a concurrent first opening stored the clip tokens: read them
        return retrying(work)


def record_playback(
    engine: Engine,
    config: StudyConfig,
    rater_id: str,
    assignment_id: int,
    stimulus_id: str,
    event: str,
    media_time: float | None,
) -> GateStatus:
    """Store one playback event reported by the page; returns the gate as it now stands."""
    if event not in PLAYBACK_EVENTS:
        raise Refused(422, f"field 'event': one of {', '.join(PLAYBACK_EVENTS)}")
    if media_time is not None and not 0 <= media_time < 86400:
        raise Refused(422, "field 'media_time': seconds from 0")

    def work() -> GateStatus:
        now = utcnow()
        with transaction(engine) as conn:
            row = _assignment(conn, config.study_id, rater_id, assignment_id)
            item = StudyItem.model_validate(row.payload)
            if stimulus_id not in {s.id for s in item.stimuli}:
                raise Refused(422, "field 'stimulus_id': not a clip of this item")
            count = conn.execute(
                select(func.count())
                .select_from(playback_table)
                .where(playback_table.c.assignment_id == assignment_id)
            ).scalar_one()
            if count >= MAX_PLAYBACK_EVENTS:
                raise Refused(429, "Too many playback reports for this item.")
            conn.execute(
                insert(playback_table).values(
                    assignment_id=assignment_id,
                    stimulus_id=stimulus_id,
                    event=event,
                    media_time=media_time,
                    at=now,
                )
            )
            return gate_status(
                conn, assignment_id, item, row.page_opened_at, config.min_time_factor, now
            )

    return retrying(work)


def _check(
    conn: Connection, config: StudyConfig, rater_id: str, assignment_id: int, now: datetime
) -> tuple[Row[Any], StudyItem]:
    row = _assignment(conn, config.study_id, rater_id, assignment_id)
    if _response(conn, config.study_id, row.item_id, rater_id) is not None:
        raise Refused(409, "You already answered this item; your first answer was kept.")
    recent = conn.execute(
        select(func.count())
        .select_from(responses_table)
        .where(responses_table.c.study_id == config.study_id)
        .where(responses_table.c.rater_id == rater_id)
        .where(responses_table.c.submitted_at > now - timedelta(minutes=1))
    ).scalar_one()
    if recent >= config.rate_limit_per_minute:
        raise Refused(
            429,
            f"Too many answers: at most {config.rate_limit_per_minute} per minute. "
            "Wait a moment, then submit again.",
        )
    item = StudyItem.model_validate(row.payload)
    gate = gate_status(conn, assignment_id, item, row.page_opened_at, config.min_time_factor, now)
    if not gate.passed:
        labels = clip_labels(page_clips(item, bool(row.swap_sides)))
        raise Refused(422, gate.explanation(labels))
    return row, item


def precheck(engine: Engine, config: StudyConfig, rater_id: str, assignment_id: int) -> StudyItem:
    """The checks of ``submit`` without storing (before an upload is decoded and written)."""

    def work() -> StudyItem:
        with transaction(engine) as conn:
            return _check(conn, config, rater_id, assignment_id, utcnow())[1]

    return retrying(work)


def submit(
    engine: Engine,
    config: StudyConfig,
    rater_id: str,
    assignment_id: int,
    build_answer: Callable[[StudyItem, bool], JSONObject],
) -> tuple[StudyItem, JSONObject]:
    """Check and store the answer ``build_answer(item, swapped)`` (which may raise
    ``Refused``); committed when this returns."""

    def work() -> tuple[StudyItem, JSONObject]:
        now = utcnow()
        with transaction(engine) as conn:
            row, item = _check(conn, config, rater_id, assignment_id, now)
            answer = build_answer(item, bool(row.swap_sides))
            opened = as_utc(row.page_opened_at) if row.page_opened_at is not None else now
            conn.execute(
                insert(responses_table).values(
                    study_id=config.study_id,
                    item_id=row.item_id,
                    rater_id=rater_id,
                    assignment_id=assignment_id,
                    task=config.task,
                    answer=answer,
                    seconds_on_page=max(0.0, (now - opened).total_seconds()),
                    submitted_at=now,
                    gold_correct=gold_correct(item, answer),
                )
            )
            conn.execute(
                update(assignments_table)
                .where(assignments_table.c.assignment_id == assignment_id)
                .values(status="done")
            )
            return item, answer

    try:
        return retrying(work)
    except IntegrityError as exc:  # a concurrent duplicate got there first
        raise Refused(409, "You already answered this item; your first answer was kept.") from exc
