"""``run.yaml``: the run id, the resolved config (secrets scrubbed) and provenance.

Every change rewrites the whole file atomically, so it is always complete and parseable.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from voxeval import atomic_files
from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.redaction import redact_env_secrets, scrub
from voxeval.runformat import FORMAT_VERSION, RunManifest, parse_artifact
from voxeval.store.provenance import environment, now_iso


def voxeval_version() -> str:
    try:
        return version("voxeval")
    except PackageNotFoundError:
        return "unknown"


class RunFile:
    """Thread-safe access to one run's ``run.yaml`` (created with a fresh run id if absent).
    ``writable=False``: a worker's view, which reads it; a change raises (only the driver
    writes run.yaml)."""

    def __init__(self, path: Path, *, writable: bool = True) -> None:
        self.path = path
        self.writable = writable
        self._lock = threading.Lock()
        self._doc = self._load_or_create()

    @property
    def run_id(self) -> str:
        return str(self._doc["run_id"])

    def _load_or_create(self) -> dict[str, Any]:
        if self.path.exists():
            data = yaml.safe_load(self.path.read_text(encoding="utf-8")) or {}
            if isinstance(data, dict) and data.get("run_id"):
                return data
        doc = {
            "run_id": f"{self.path.parent.name}-{uuid.uuid4().hex[:8]}",
            "format_version": FORMAT_VERSION,
            "created_at": now_iso(),
            "voxeval_version": voxeval_version(),
        }
        self._write_file(doc)
        return doc

    def _refuse_if_read_only(self) -> None:
        if not self.writable:
            raise RuntimeError(
                "a worker (Ray or process) tried to change run.yaml; only the driver writes it"
            )

    def _write_file(self, doc: dict[str, Any]) -> None:
        clean = scrub(doc)
        parse_artifact(RunManifest, clean, self.path)  # what is written reads back as a run file
        text = yaml.safe_dump(clean, sort_keys=False, allow_unicode=True)
        atomic_files.write_text_atomic(self.path, redact_env_secrets(text))

    def data(self) -> dict[str, Any]:
        """A copy of the current contents."""
        with self._lock:
            return dict(self._doc)

    def update(self, changes: JSONReadObject) -> None:
        self._refuse_if_read_only()
        with self._lock:
            self._doc.update(changes)
            self._write_file(self._doc)

    def drop(self, *keys: str) -> None:
        self._refuse_if_read_only()
        with self._lock:
            for key in keys:
                self._doc.pop(key, None)
            self._write_file(self._doc)

    def stored_config(self) -> dict[str, Any] | None:
        config = self.data().get("config")
        return dict(config) if isinstance(config, dict) else None

    def write_provenance(
        self, config: BaseModel | Mapping[str, JSONReadValue], extra: JSONReadObject | None = None
    ) -> None:
        """Record the resolved config, versions, platform, git commit, seed and start time.
        On resume the first start time is kept and the resume time appended."""
        self._refuse_if_read_only()
        dumped = config.model_dump(mode="json") if isinstance(config, BaseModel) else dict(config)
        changes: dict[str, Any] = {
            "voxeval_version": voxeval_version(),
            "config": dumped,
            "seed": dumped.get("seed"),
            "environment": environment(),
        }
        with self._lock:
            if "started_at" in self._doc:
                changes["resumed_at"] = [*self._doc.get("resumed_at", []), now_iso()]
            else:
                changes["started_at"] = now_iso()
            if extra:
                changes["extra"] = {**dict(self._doc.get("extra") or {}), **dict(extra)}
            self._doc.update(changes)
            self._write_file(self._doc)

    def update_extra(self, changes: JSONReadObject) -> None:
        self._refuse_if_read_only()
        with self._lock:
            self._doc["extra"] = {**dict(self._doc.get("extra") or {}), **dict(changes)}
            self._write_file(self._doc)

    def add_model_identity(self, kind: str, identity: JSONReadObject) -> None:
        self._refuse_if_read_only()
        clean = scrub(dict(identity))
        with self._lock:
            models = dict(self._doc.get("models") or {})
            known = list(models.get(kind) or [])
            if clean in known:
                return
            models[kind] = [*known, clean]
            self._doc["models"] = models
            self._write_file(self._doc)
