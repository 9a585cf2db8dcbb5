"""Baseline of the rater database: its tables as of voxeval 0.1 (December 2026).

Creates them in a new database; in one written before alembic was used, adds the columns and
indexes it lacks. The tables are frozen here (later revisions change them, not this file).

Revision ID: 0001
Revises:
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa

from voxeval.store.schema_versions import create_or_complete

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

SCHEMA = sa.MetaData()

sa.Table(
    "rater_accounts",
    SCHEMA,
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("rater_id", sa.String(length=200), nullable=False),
    sa.Column("role", sa.String(length=10), nullable=False),
    sa.Column("token_sha256", sa.String(length=64), nullable=False),
    sa.Column("label", sa.String(length=200), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("trained_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("disabled", sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint("study_id", "rater_id"),
    sa.UniqueConstraint("token_sha256"),
)
sa.Table(
    "rater_assignments",
    SCHEMA,
    sa.Column("assignment_id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("rater_id", sa.String(length=200), nullable=False),
    sa.Column("item_id", sa.String(length=500), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("swap_sides", sa.Boolean(), nullable=False),
    sa.Column("stimulus_order", sa.JSON(), nullable=True),
    sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("page_opened_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("status", sa.String(length=10), nullable=False),
    sa.PrimaryKeyConstraint("assignment_id"),
    sa.UniqueConstraint("study_id", "rater_id", "item_id", name="one_assignment_per_rater_item"),
)
sa.Index(
    "assignments_by_item",
    *(SCHEMA.tables["rater_assignments"].c[c] for c in ["study_id", "item_id", "status"]),
    unique=False,
)
sa.Table(
    "rater_items",
    SCHEMA,
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("item_id", sa.String(length=500), nullable=False),
    sa.Column("kind", sa.String(length=10), nullable=False),
    sa.Column("target_raters", sa.Integer(), nullable=False),
    sa.Column("payload", sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint("study_id", "item_id"),
)
sa.Table(
    "rater_sessions",
    SCHEMA,
    sa.Column("session_id", sa.String(length=64), nullable=False),
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("rater_id", sa.String(length=200), nullable=False),
    sa.Column("csrf_token", sa.String(length=64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("session_id"),
)
sa.Table(
    "rater_studies",
    SCHEMA,
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("task", sa.String(length=20), nullable=False),
    sa.Column("config", sa.JSON(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("study_id"),
)
sa.Table(
    "rater_clip_tokens",
    SCHEMA,
    sa.Column("token", sa.String(length=64), nullable=False),
    sa.Column("assignment_id", sa.Integer(), nullable=False),
    sa.Column("stimulus_id", sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(
        ["assignment_id"],
        ["rater_assignments.assignment_id"],
    ),
    sa.PrimaryKeyConstraint("token"),
    sa.UniqueConstraint("assignment_id", "stimulus_id", name="one_token_per_clip"),
)
sa.Index(
    "ix_rater_clip_tokens_assignment_id",
    *(SCHEMA.tables["rater_clip_tokens"].c[c] for c in ["assignment_id"]),
    unique=False,
)
sa.Table(
    "rater_playback",
    SCHEMA,
    sa.Column("event_id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("assignment_id", sa.Integer(), nullable=False),
    sa.Column("stimulus_id", sa.String(length=200), nullable=False),
    sa.Column("event", sa.String(length=10), nullable=False),
    sa.Column("media_time", sa.Float(), nullable=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(
        ["assignment_id"],
        ["rater_assignments.assignment_id"],
    ),
    sa.PrimaryKeyConstraint("event_id"),
)
sa.Index(
    "ix_rater_playback_assignment_id",
    *(SCHEMA.tables["rater_playback"].c[c] for c in ["assignment_id"]),
    unique=False,
)
sa.Table(
    "rater_responses",
    SCHEMA,
    sa.Column("response_id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("study_id", sa.String(length=200), nullable=False),
    sa.Column("item_id", sa.String(length=500), nullable=False),
    sa.Column("rater_id", sa.String(length=200), nullable=False),
    sa.Column("assignment_id", sa.Integer(), nullable=False),
    sa.Column("task", sa.String(length=20), nullable=False),
    sa.Column("answer", sa.JSON(), nullable=False),
    sa.Column("seconds_on_page", sa.Float(), nullable=False),
    sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("gold_correct", sa.Boolean(), nullable=True),
    sa.ForeignKeyConstraint(
        ["assignment_id"],
        ["rater_assignments.assignment_id"],
    ),
    sa.PrimaryKeyConstraint("response_id"),
    sa.UniqueConstraint("assignment_id"),
    sa.UniqueConstraint("study_id", "item_id", "rater_id", name="one_response_per_rater_item"),
)


def upgrade() -> None:
    create_or_complete(SCHEMA)


def downgrade() -> None:
    raise NotImplementedError("the rater database is never downgraded below its baseline")
