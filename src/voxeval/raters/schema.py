"""The rater database: one schema for SQLite (default, a file beside the study) and PostgreSQL
(by URL). Every response is committed in its own transaction before the rater's page
advances, so a killed server loses nothing that a rater saw accepted.

Tables (all keyed by ``study_id`` so one database can hold several studies):

- ``rater_studies``: one row per study (its ``study.yaml`` content as JSON).
- ``rater_items``: what raters judge; ``payload`` is the item's JSON from ``items.jsonl``
  (stimuli, texts, hidden system names); ``kind`` ``normal`` or ``gold`` (known answer).
- ``rater_accounts``: raters and admins; only a SHA-256 hash of each invite token is stored.
- ``rater_sessions``: a logged-in browser: random session id (cookie) and its CSRF token.
- ``rater_assignments``: an item issued to a rater, with the seeded presentation (stimulus
  order, A/B side swap); at most one per (study, rater, item).
- ``rater_clip_tokens``: the random, per-assignment id under which the page fetches each clip
  (nothing about the item, side or system can be computed from it).
- ``rater_playback``: playback events the page reported (``play``, ``ended``), server-timed.
- ``rater_responses``: the accepted answer; unique per (study, item, rater) and per assignment.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    ColumnElement,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    and_,
)

metadata = MetaData()

studies_table = Table(
    "rater_studies",
    metadata,
    Column("study_id", String(200), primary_key=True),
    Column("task", String(20), nullable=False),  # arena | rubric | score | record
    Column("config", JSON, nullable=False),  # study.yaml as loaded
    Column("created_at", DateTime(timezone=True), nullable=False),
)

items_table = Table(
    "rater_items",
    metadata,
    Column("study_id", String(200), primary_key=True),
    Column("item_id", String(500), primary_key=True),
    Column("kind", String(10), nullable=False, default="normal"),  # normal | gold
    Column("target_raters", Integer, nullable=False),
    Column("payload", JSON, nullable=False),
)

accounts_table = Table(
    "rater_accounts",
    metadata,
    Column("study_id", String(200), primary_key=True),
    Column("rater_id", String(200), primary_key=True),
    Column("role", String(10), nullable=False),  # rater | admin
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("label", String(200), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("trained_at", DateTime(timezone=True), nullable=True),
    Column("disabled", Boolean, nullable=False, default=False),
)

sessions_table = Table(
    "rater_sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("study_id", String(200), nullable=False),
    Column("rater_id", String(200), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

assignments_table = Table(
    "rater_assignments",
    metadata,
    Column("assignment_id", Integer, primary_key=True, autoincrement=True),
    Column("study_id", String(200), nullable=False),
    Column("rater_id", String(200), nullable=False),
    Column("item_id", String(500), nullable=False),
    Column("position", Integer, nullable=False),  # order in the rater's queue
    Column("swap_sides", Boolean, nullable=False, default=False),  # arena: B shown as A
    Column("stimulus_order", JSON, nullable=True),
    Column("issued_at", DateTime(timezone=True), nullable=False),
    Column("page_opened_at", DateTime(timezone=True), nullable=True),
    Column("status", String(10), nullable=False),  # open | done | expired
    UniqueConstraint("study_id", "rater_id", "item_id", name="one_assignment_per_rater_item"),
    Index("assignments_by_item", "study_id", "item_id", "status"),
)

clip_tokens_table = Table(
    "rater_clip_tokens",
    metadata,
    Column("token", String(64), primary_key=True),
    Column(
        "assignment_id",
        Integer,
        ForeignKey("rater_assignments.assignment_id"),
        nullable=False,
        index=True,
    ),
    Column("stimulus_id", String(200), nullable=False),
    UniqueConstraint("assignment_id", "stimulus_id", name="one_token_per_clip"),
)

playback_table = Table(
    "rater_playback",
    metadata,
    Column("event_id", Integer, primary_key=True, autoincrement=True),
    Column(
        "assignment_id",
        Integer,
        ForeignKey("rater_assignments.assignment_id"),
        nullable=False,
        index=True,
    ),
    Column("stimulus_id", String(200), nullable=False),
    Column("event", String(10), nullable=False),  # play | ended
    Column("media_time", Float, nullable=True),  # the element's currentTime, seconds
    Column("at", DateTime(timezone=True), nullable=False),  # server clock
)

responses_table = Table(
    "rater_responses",
    metadata,
    Column("response_id", Integer, primary_key=True, autoincrement=True),
    Column("study_id", String(200), nullable=False),
    Column("item_id", String(500), nullable=False),
    Column("rater_id", String(200), nullable=False),
    Column(
        "assignment_id",
        Integer,
        ForeignKey("rater_assignments.assignment_id"),
        nullable=False,
        unique=True,
    ),
    Column("task", String(20), nullable=False),
    # arena: {"choice": "a"|"b"|"tie"|"both_bad", "winner": system|"tie"|"both_bad",
    #         "first": system shown as A, "second": system shown as B, "reason": str}
    # rubric: {"system": str, "criteria": {criterion_id: 0|1}, "reason": str}
    # score: {"system": str, "score": 1..10, "reason": str}
    # record: {"path": study-relative WAV, "duration_s": float, "sample_rate": int}
    Column("answer", JSON, nullable=False),
    Column("seconds_on_page", Float, nullable=False),
    Column("submitted_at", DateTime(timezone=True), nullable=False),
    Column("gold_correct", Boolean, nullable=True),  # gold items only
    UniqueConstraint("study_id", "item_id", "rater_id", name="one_response_per_rater_item"),
)


# An assignment's item (items are keyed by study and item id).
ITEM_OF_ASSIGNMENT: ColumnElement[bool] = and_(
    items_table.c.study_id == assignments_table.c.study_id,
    items_table.c.item_id == assignments_table.c.item_id,
)


def rater_assignment(study_id: str, rater_id: str) -> ColumnElement[bool]:
    """The condition that an assignment is this rater's in this study."""
    return and_(assignments_table.c.study_id == study_id, assignments_table.c.rater_id == rater_id)
