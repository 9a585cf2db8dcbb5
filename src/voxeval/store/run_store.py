"""``RunStore``: one run folder (artifacts + run.yaml) and its index, as the parts that each
keep one kind of record: the folder's files (``folder``), run.yaml (``run_yaml``), what a
running unit records (``recorder``), the units (``units``), their scores (``scores``), what
the providers cost (``usage``) and the comparisons across systems (``comparisons``).

Resume contract: a unit counts as finished only when its status is ``done``; the runner
writes every artifact (atomically) and saves the scores *before* the unit is marked done,
and each index write commits on its own. So a process killed at any moment loses at most the
units in flight.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import delete
from sqlalchemy.engine import make_url

from voxeval.errors import ConfigError
from voxeval.store import layout
from voxeval.store.comparisons import ComparisonStore
from voxeval.store.index import (
    Index,
    RunIndex,
    items_table,
    model_usage_table,
    scores_table,
    units_table,
    usage_table,
)
from voxeval.store.recorder import IndexRecorder, RunRecorder
from voxeval.store.run_file import RunFile
from voxeval.store.run_folder import RunFolder, foreign_folder_error
from voxeval.store.run_folder import is_foreign_folder as is_foreign_folder
from voxeval.store.run_folder import is_run_folder as is_run_folder
from voxeval.store.run_folder import (
    refuse_to_reset_foreign_folder as refuse_to_reset_foreign_folder,
)
from voxeval.store.score_index import ScoreIndex
from voxeval.store.shared_reads import SharedReads
from voxeval.store.unit_status import UnitStatus
from voxeval.store.unit_writes import UnitWrites
from voxeval.store.usage_index import UsageIndex
from voxeval.store.worker_index import WorkerIndex

INDEX_URL_ENV = "VOXEVAL_INDEX_URL"


def _safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL fails later with SQLAlchemy's own message
        return "<unparsable url>"


class RunStore:
    """The run folder ``run_dir`` and its index (``index_url``, default ``VOXEVAL_INDEX_URL``
    or ``sqlite:///<run_dir>/index.sqlite``).

    ``worker_recorder``: the store of a Ray or process worker, which never touches the
    index (only the driver writes it): none is opened, any use of it raises, run.yaml is
    read-only, and what units record goes to ``worker_recorder`` (a journal the driver
    applies)."""

    def __init__(
        self,
        run_dir: Path | str,
        index_url: str | None = None,
        *,
        worker_recorder: RunRecorder | None = None,
    ) -> None:
        self.folder = RunFolder(run_dir)
        self.run_dir = self.folder.run_dir
        self.items_dir = self.folder.items_dir
        self.report_dir = self.folder.report_dir
        self.run_file = self.folder.run_file
        self.run_yaml = RunFile(self.run_file, writable=worker_recorder is None)
        self.run_id: str = self.run_yaml.run_id
        self.index: RunIndex
        if worker_recorder is None:
            self.index_url = self._index_url(index_url)
            self.index = Index(self.index_url, self.run_id)
            if self.index_url != self._default_url():
                self.run_yaml.update({"index_url": _safe_url(self.index_url)})
        else:
            self.index_url = ""
            self.index = WorkerIndex(self.run_id)
        self.writes = UnitWrites(self.index)  # finished units commit together
        self.recorder: RunRecorder = worker_recorder or IndexRecorder(
            self.index, self.writes, self.run_yaml
        )
        self.reads = SharedReads()
        self.scores = ScoreIndex(self.index, self.writes, self.folder, self.reads)
        self.units = UnitStatus(self.index, self.writes, self.folder, self.scores, self.reads)
        self.usage = UsageIndex(self.index, self.writes, self.reads)
        self.comparisons = ComparisonStore(self.index, self.run_dir)  # across systems

    def _default_url(self) -> str:
        return f"sqlite:///{self.run_dir / layout.INDEX_FILE}"

    def _index_url(self, index_url: str | None) -> str:
        """The index's URL; refused when run.yaml records another database and none is
        given (a URL other than the default is recorded there, password hidden)."""
        url = index_url or os.environ.get(INDEX_URL_ENV) or self._default_url()
        recorded = self.run_yaml.data().get("index_url")
        if recorded and url == self._default_url():
            raise ConfigError(
                f"{self.run_file}: this run's index is in {recorded}; set {INDEX_URL_ENV} "
                "to that database URL (with its password) to open it"
            )
        return url

    @contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within the block, each whole-run read (every unit, the scores of done units, the
        model usage rows) queries the index once and later calls share that result: a report
        reads them in several places, and its parts then agree with each other. Meant for
        blocks that only read (writes made inside are not seen by the shared results). Only
        the calling thread shares them: other threads using this store read the index."""
        with self.reads.reading_once():
            yield

    def flush(self) -> None:
        """Commit the bookkeeping writes still queued (a unit's start, what it cost)."""
        self.writes.flush()

    def reset(self) -> None:
        """Forget every unit, score, usage record, comparison and artifact of this run
        (``--no-resume``).
        Refuses, deleting nothing, when the folder was not a voxeval run when opened."""
        if self.folder.foreign:
            raise foreign_folder_error(self.run_dir)
        with self.index.write() as conn:
            for table in (
                units_table,
                items_table,
                scores_table,
                usage_table,
                model_usage_table,
            ):
                conn.execute(delete(table).where(table.c.run_id == self.run_id))
        self.comparisons.clear()
        self.folder.clear_artifacts()
        self.run_yaml.drop("started_at", "resumed_at", "models")

    def close(self) -> None:
        self.index.dispose()
