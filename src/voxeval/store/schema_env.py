"""The body of every alembic ``env.py`` of voxeval: migrate on the connection the caller
opened (``voxeval.store.schema_versions.upgrade``), recording the revision in the database's
own version table."""

from __future__ import annotations

from alembic import context


def run_migrations() -> None:
    config = context.config
    context.configure(
        connection=config.attributes["connection"],
        version_table=config.attributes["version_table"],
        target_metadata=None,
    )
    with context.begin_transaction():
        context.run_migrations()
