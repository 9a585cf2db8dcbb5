"""Baseline of the run index: its tables as of voxeval 0.1 (December 2026).

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
    "comparisons",
    SCHEMA,
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("step", sa.String(length=200), nullable=False),
    sa.Column("comparison_key", sa.String(length=1000), nullable=False),
    sa.Column("unit_keys", sa.JSON(), nullable=False),
    sa.Column("status", sa.String(length=20), nullable=False),
    sa.Column("result", sa.JSON(), nullable=True),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("cause", sa.String(length=200), nullable=True),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("compared_at", sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint("run_id", "step", "comparison_key"),
)
sa.Table(
    "items",
    SCHEMA,
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("item_id", sa.String(length=500), nullable=False),
    sa.Column("category", sa.String(length=200), nullable=False),
    sa.Column("meta", sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint("run_id", "item_id"),
)
sa.Table(
    "model_usage",
    SCHEMA,
    sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("unit_key", sa.String(length=1000), nullable=False),
    sa.Column("system", sa.String(length=200), nullable=False),
    sa.Column("component", sa.String(length=200), nullable=False),
    sa.Column("kind", sa.String(length=40), nullable=False),
    sa.Column("provider", sa.String(length=200), nullable=False),
    sa.Column("model", sa.String(length=300), nullable=False),
    sa.Column("calls", sa.Integer(), nullable=False),
    sa.Column("requests", sa.Integer(), nullable=False),
    sa.Column("retries", sa.Integer(), nullable=False),
    sa.Column("timeouts", sa.Integer(), nullable=False),
    sa.Column("prompt_tokens", sa.Integer(), nullable=False),
    sa.Column("completion_tokens", sa.Integer(), nullable=False),
    sa.Column("prompt_audio_tokens", sa.Integer(), nullable=False),
    sa.Column("completion_audio_tokens", sa.Integer(), nullable=False),
    sa.Column("audio_in_s", sa.Float(), nullable=False),
    sa.Column("audio_out_s", sa.Float(), nullable=False),
    sa.Column("recorded_at", sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(
    "ix_model_usage_run_id", *(SCHEMA.tables["model_usage"].c[c] for c in ["run_id"]), unique=False
)
sa.Table(
    "scores",
    SCHEMA,
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("unit_key", sa.String(length=1000), nullable=False),
    sa.Column("metric", sa.String(length=200), nullable=False),
    sa.Column("value", sa.Float(), nullable=True),
    sa.Column("passed", sa.Integer(), nullable=True),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("details", sa.JSON(), nullable=True),
    sa.Column("pending", sa.Integer(), nullable=True),
    sa.Column("scored_at", sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint("run_id", "unit_key", "metric"),
)
sa.Index(
    "ix_scores_run_metric",
    *(SCHEMA.tables["scores"].c[c] for c in ["run_id", "metric", "value"]),
    unique=False,
)
sa.Table(
    "units",
    SCHEMA,
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("unit_key", sa.String(length=1000), nullable=False),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("item_id", sa.String(length=500), nullable=False),
    sa.Column("system", sa.String(length=200), nullable=False),
    sa.Column("trial", sa.Integer(), nullable=False),
    sa.Column("condition", sa.String(length=200), nullable=False),
    sa.Column("category", sa.String(length=200), nullable=False),
    sa.Column("status", sa.String(length=20), nullable=False),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("cause", sa.String(length=200), nullable=True),
    sa.Column("system_fault", sa.String(length=40), nullable=True),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("started_at", sa.DateTime(), nullable=True),
    sa.Column("finished_at", sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint("run_id", "unit_key"),
)
sa.Index(
    "ix_units_run_category",
    *(SCHEMA.tables["units"].c[c] for c in ["run_id", "category"]),
    unique=False,
)
sa.Index(
    "ix_units_run_condition",
    *(SCHEMA.tables["units"].c[c] for c in ["run_id", "condition"]),
    unique=False,
)
sa.Index(
    "ix_units_run_seq", *(SCHEMA.tables["units"].c[c] for c in ["run_id", "seq"]), unique=False
)
sa.Index(
    "ix_units_run_status",
    *(SCHEMA.tables["units"].c[c] for c in ["run_id", "status"]),
    unique=False,
)
sa.Index(
    "ix_units_run_system",
    *(SCHEMA.tables["units"].c[c] for c in ["run_id", "system", "seq"]),
    unique=False,
)
sa.Table(
    "usage",
    SCHEMA,
    sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("run_id", sa.String(length=200), nullable=False),
    sa.Column("unit_key", sa.String(length=1000), nullable=False),
    sa.Column("system", sa.String(length=200), nullable=False),
    sa.Column("provider", sa.String(length=200), nullable=False),
    sa.Column("calls", sa.Integer(), nullable=False),
    sa.Column("prompt_tokens", sa.Integer(), nullable=False),
    sa.Column("completion_tokens", sa.Integer(), nullable=False),
    sa.Column("cost_usd", sa.Float(), nullable=True),
    sa.Column("parse_failures", sa.Integer(), nullable=False),
    sa.Column("recorded_at", sa.DateTime(), nullable=False),
    sa.Column("requests", sa.Integer(), nullable=True),
    sa.Column("retries", sa.Integer(), nullable=True),
    sa.Column("timeouts", sa.Integer(), nullable=True),
    sa.Column("prompt_audio_tokens", sa.Integer(), nullable=True),
    sa.Column("completion_audio_tokens", sa.Integer(), nullable=True),
    sa.Column("audio_in_s", sa.Float(), nullable=True),
    sa.Column("audio_out_s", sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index("ix_usage_run_id", *(SCHEMA.tables["usage"].c[c] for c in ["run_id"]), unique=False)


def upgrade() -> None:
    create_or_complete(SCHEMA)


def downgrade() -> None:
    raise NotImplementedError("the run index is never downgraded below its baseline")
