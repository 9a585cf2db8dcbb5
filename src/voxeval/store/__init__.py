"""Run folders, their SQLite index, provenance, resume and secret scrubbing."""

from voxeval.atomic_files import write_json_atomic, write_text_atomic
from voxeval.redaction import (
    REDACTED,
    is_secret_field,
    redact_env_secrets,
    redact_text,
    register_config_secrets,
    scrub,
)
from voxeval.store.layout import safe_name, unit_relpath
from voxeval.store.records import ScoreRow, UnitLike, UnitRecord
from voxeval.store.run_reader import RunReader, read_manifest
from voxeval.store.run_store import INDEX_URL_ENV, RunStore

__all__ = [
    "INDEX_URL_ENV",
    "REDACTED",
    "RunReader",
    "RunStore",
    "ScoreRow",
    "UnitLike",
    "UnitRecord",
    "is_secret_field",
    "read_manifest",
    "redact_env_secrets",
    "redact_text",
    "register_config_secrets",
    "safe_name",
    "scrub",
    "unit_relpath",
    "write_json_atomic",
    "write_text_atomic",
]
