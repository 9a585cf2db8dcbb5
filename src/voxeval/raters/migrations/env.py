"""alembic's entry point for this script folder (see voxeval.store.schema_env)."""

from voxeval.store.schema_env import run_migrations

run_migrations()
