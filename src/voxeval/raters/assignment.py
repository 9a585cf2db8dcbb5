"""Which item a rater judges next, decided when they ask for it.

- Never an item they already have (answered, or open in another tab).
- Normal items go least-loaded first, where load = accepted answers + assignments opened
  recently by other raters (so raters arriving together spread out), until every item
  reaches ``raters_per_item``. An open assignment older than the time-to-live expires and no
  longer counts.
- After every ``gold_every`` answers, a gold (attention) item the rater has not seen yet.
- Ties are broken by a per-rater order: a hash of the study seed, the rater and the item,
  which also decides whether the arena sides are swapped for this rater. Same seed, same
  order.
Choosing is serialised per study — SQLite transactions hold the write lock from their start,
PostgreSQL takes a transaction-scoped advisory lock — so two raters never both take the last
slot of an item; the unique (study, rater, item) constraint and a retry cover a rater's two
tabs asking at once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import Engine, func, insert, literal, select, text, union_all, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from voxeval.raters.database import retrying, transaction, utcnow
from voxeval.raters.schema import assignments_table, items_table, responses_table
from voxeval.raters.study.study_files import StudyConfig

OPEN_TTL = timedelta(minutes=20)
_CONFLICT_RETRIES = 5

Outcome = Literal["assigned", "finished", "waiting"]


@dataclass(frozen=True)
class NextItem:
    outcome: Outcome  # finished: nothing left for this rater; waiting: others hold the rest
    assignment_id: int | None = None


def presentation_key(seed: int, rater_id: str, item_id: str) -> int:
    """A stable pseudo-random number for (study seed, rater, item)."""
    rater_hash = hashlib.sha256(rater_id.encode("utf-8")).hexdigest()
    digest = hashlib.sha256(f"{seed}|{rater_hash}|{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def swap_sides(seed: int, rater_id: str, item_id: str) -> bool:
    """Arena: show system B on the left (as "A") for this rater and item."""
    return presentation_key(seed, rater_id, item_id) & 1 == 1


def _serialise(conn: Connection, study_id: str) -> None:
    if conn.dialect.name == "postgresql":
        digest = hashlib.sha256(f"voxeval-raters|{study_id}".encode()).digest()
        key = int.from_bytes(digest[:8], "big", signed=True)
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def expire_stale(conn: Connection, study_id: str, now: datetime, ttl: timedelta) -> None:
    conn.execute(
        update(assignments_table)
        .where(assignments_table.c.study_id == study_id)
        .where(assignments_table.c.status == "open")
        .where(assignments_table.c.issued_at < now - ttl)
        .values(status="expired")
    )


def _resume(conn: Connection, study_id: str, rater_id: str, now: datetime) -> int | None:
    """The rater's unanswered assignment (a reload, or one that expired while away)."""
    answered = select(responses_table.c.assignment_id).where(responses_table.c.study_id == study_id)
    row = conn.execute(
        select(assignments_table.c.assignment_id, assignments_table.c.status)
        .where(assignments_table.c.study_id == study_id)
        .where(assignments_table.c.rater_id == rater_id)
        .where(assignments_table.c.status.in_(("open", "expired")))
        .where(assignments_table.c.assignment_id.not_in(answered))
        .order_by(assignments_table.c.position)
        .limit(1)
    ).first()
    if row is None:
        return None
    if row.status != "open":
        conn.execute(
            update(assignments_table)
            .where(assignments_table.c.assignment_id == row.assignment_id)
            .values(status="open", issued_at=now)
        )
    return int(row.assignment_id)


def _pick(
    conn: Connection, config: StudyConfig, rater_id: str, now: datetime, ttl: timedelta
) -> tuple[str | None, Outcome]:
    study_id = config.study_id
    items = conn.execute(
        select(items_table.c.item_id, items_table.c.kind, items_table.c.target_raters)
        .where(items_table.c.study_id == study_id)
        .where(items_table.c.target_raters > 0)
    ).all()
    mine = {
        r.item_id: r.status
        for r in conn.execute(
            select(assignments_table.c.item_id, assignments_table.c.status)
            .where(assignments_table.c.study_id == study_id)
            .where(assignments_table.c.rater_id == rater_id)
        )
    }
    kinds = {r.item_id: r.kind for r in items}

    def key(item_id: str) -> int:
        return presentation_key(config.seed, rater_id, item_id)

    if config.gold_every > 0:
        normal_done = sum(1 for i, s in mine.items() if s == "done" and kinds.get(i) == "normal")
        gold_seen = sum(1 for i in mine if kinds.get(i) == "gold")
        if normal_done >= (gold_seen + 1) * config.gold_every:
            gold = sorted(
                (r.item_id for r in items if r.kind == "gold" and r.item_id not in mine), key=key
            )
            if gold:
                return gold[0], "assigned"

    # Answers and recent open assignments in ONE statement: under PostgreSQL's read committed
    # each statement sees its own snapshot, and an answer committed between two separate
    # counts would move from "held" to "done" unseen, letting an item overshoot its target.
    answered = select(
        responses_table.c.item_id,
        literal(1).label("answered"),
        literal(0).label("held"),
    ).where(responses_table.c.study_id == study_id)
    holding = (
        select(
            assignments_table.c.item_id,
            literal(0).label("answered"),
            literal(1).label("held"),
        )
        .where(assignments_table.c.study_id == study_id)
        .where(assignments_table.c.status == "open")
        .where(assignments_table.c.issued_at >= now - ttl)
    )
    both = union_all(answered, holding).subquery()
    done: dict[str, int] = {}
    held: dict[str, int] = {}
    for row in conn.execute(
        select(both.c.item_id, func.sum(both.c.answered), func.sum(both.c.held)).group_by(
            both.c.item_id
        )
    ):
        done[row[0]] = int(row[1] or 0)
        held[row[0]] = int(row[2] or 0)
    candidates = []
    short_of_answers = False
    for row in items:
        if row.kind != "normal" or row.item_id in mine:
            continue
        answers = int(done.get(row.item_id, 0))
        if answers >= row.target_raters:
            continue
        short_of_answers = True
        load = answers + int(held.get(row.item_id, 0))
        if load < row.target_raters:
            candidates.append((load, key(row.item_id), row.item_id))
    if candidates:
        return min(candidates)[2], "assigned"
    return None, "waiting" if short_of_answers else "finished"


def next_item(
    engine: Engine,
    config: StudyConfig,
    rater_id: str,
    *,
    now: datetime | None = None,
    ttl: timedelta = OPEN_TTL,
) -> NextItem:
    """The rater's current assignment, or a new one; or why there is none."""

    def work() -> NextItem:
        moment = now or utcnow()
        with transaction(engine) as conn:
            _serialise(conn, config.study_id)
            expire_stale(conn, config.study_id, moment, ttl)
            resumed = _resume(conn, config.study_id, rater_id, moment)
            if resumed is not None:
                return NextItem("assigned", resumed)
            item_id, outcome = _pick(conn, config, rater_id, moment, ttl)
            if item_id is None:
                return NextItem(outcome)
            payload = conn.execute(
                select(items_table.c.payload)
                .where(items_table.c.study_id == config.study_id)
                .where(items_table.c.item_id == item_id)
            ).scalar_one()
            position = conn.execute(
                select(func.count())
                .select_from(assignments_table)
                .where(assignments_table.c.study_id == config.study_id)
                .where(assignments_table.c.rater_id == rater_id)
            ).scalar_one()
            result = conn.execute(
                insert(assignments_table).values(
                    study_id=config.study_id,
                    rater_id=rater_id,
                    item_id=item_id,
                    position=int(position) + 1,
                    swap_sides=config.task == "arena"
                    and swap_sides(config.seed, rater_id, item_id),
                    stimulus_order=[s["id"] for s in payload.get("stimuli", [])],
                    issued_at=moment,
                    status="open",
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            return NextItem("assigned", int(key[0]))

    for attempt in range(_CONFLICT_RETRIES):
        try:
            return retrying(work)
        except IntegrityError:
            # Another request of this rater (a second tab) took the same item first.
            if attempt == _CONFLICT_RETRIES - 1:
                raise
    raise AssertionError("unreachable")
