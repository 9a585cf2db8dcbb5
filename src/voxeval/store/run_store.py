"""``RunStore``: one run folder (artifacts + run.yaml) and its index.

Resume contract: a unit counts as finished only when its status is ``done``; the runner writes
every artifact (atomically) and saves the scores *before* calling ``finish``, and each index
write commits on its own. So a process killed at any moment loses at most the units in flight.
"""

from __future__ import annotations

import os
import shutil
import threading
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml
from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection, make_url

from voxeval import atomic_files
from voxeval.errors import ConfigError
from voxeval.providers.usage.usage_ledger import ComponentUsage
from voxeval.redaction import redact_env_secrets, scrub
from voxeval.runformat import UnitScores, record_data
from voxeval.scoring.score import Score
from voxeval.store import layout
from voxeval.store.batched_writes import Rows, Write
from voxeval.store.comparisons import ComparisonStore
from voxeval.store.group_commit import GroupCommitter
from voxeval.store.index import (
    Index,
    items_table,
    model_usage_table,
    scores_table,
    units_table,
    usage_table,
    utcnow,
)
from voxeval.store.records import INTERACTED, ScoreRow, UnitLike, UnitRecord
from voxeval.store.run_file import RunFile
from voxeval.store.unit_statements import (
    DELETE_SCORE,
    END_UNIT,
    INSERT_MODEL_USAGE,
    INSERT_SCORES,
    INSERT_UNIT,
    INSERT_USAGE,
    START_UNIT,
)
from voxeval.store.usage import (
    MODEL_AMOUNTS,
    summarize_model_usage,
    summarize_usage,
    usage_values,
)

T = TypeVar("T")

INDEX_URL_ENV = "VOXEVAL_INDEX_URL"


def is_run_folder(path: Path) -> bool:
    """True when ``path`` holds a voxeval run: a ``run.yaml`` mapping with a ``run_id``."""
    run_file = path / layout.RUN_FILE
    if not run_file.is_file():
        return False
    try:
        data = yaml.safe_load(run_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and bool(data.get("run_id"))


def is_foreign_folder(path: Path) -> bool:
    """An existing, non-empty folder that is not a voxeval run (``--no-resume`` must not
    wipe it)."""
    return path.is_dir() and any(path.iterdir()) and not is_run_folder(path)


def refuse_to_reset_foreign_folder(path: Path) -> None:
    """Raise (deleting nothing) when ``--no-resume`` names a folder that is not empty and is
    not a voxeval run folder."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: exists and is not a folder; choose another --out")
    if is_foreign_folder(path):
        raise _foreign_folder_error(path)


def _foreign_folder_error(path: Path) -> ConfigError:
    return ConfigError(
        f"{path}: refusing --no-resume: the folder is not empty and is not a voxeval run "
        f"(no {layout.RUN_FILE} with a run_id), so nothing was deleted; use an empty or "
        "new --out folder"
    )


def _safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL fails later with SQLAlchemy's own message
        return "<unparsable url>"


class RunStore:
    """The run folder ``run_dir`` and its index (``index_url``, default ``VOXEVAL_INDEX_URL``
    or ``sqlite:///<run_dir>/index.sqlite``)."""

    # Index writes wait on a commit (a worker's journal does not: see ``unit_work``).
    index_writes_wait: ClassVar[bool] = True

    def __init__(self, run_dir: Path | str, index_url: str | None = None) -> None:
        self.run_dir = Path(run_dir).resolve()
        # Decided before anything is created here: reset() never wipes a foreign folder.
        self._foreign = is_foreign_folder(self.run_dir)
        self.items_dir = self.run_dir / layout.ITEMS_DIR
        self.report_dir = self.run_dir / layout.REPORT_DIR
        self.run_file = self.run_dir / layout.RUN_FILE
        for folder in (self.run_dir, self.items_dir, self.report_dir):
            folder.mkdir(parents=True, exist_ok=True)
        # unit folder of (item, system, trial, condition), once made
        self._unit_dirs: dict[tuple[str, str, int, str], Path] = {}
        # their parent folders known to exist (an item's folder holds every system's units)
        self._parent_dirs: set[Path] = set()
        self.run_file_doc = RunFile(self.run_file)
        self.run_id: str = self.run_file_doc.run_id
        url = index_url or os.environ.get(INDEX_URL_ENV) or self._default_url()
        recorded = self.run_file_doc.data().get("index_url")
        if recorded and url == self._default_url():
            raise ConfigError(
                f"{self.run_file}: this run's index is in {recorded}; set {INDEX_URL_ENV} "
                "to that database URL (with its password) to open it"
            )
        self.index_url = url
        self.index = Index(url, self.run_id)
        self.committer = GroupCommitter(self.index)  # finished units commit together
        self._deferred: dict[str, list[Future[None]]] = {}  # unit key -> queued writes
        self._deferred_lock = threading.Lock()
        # unit key -> bookkeeping writes kept out of every commit until the unit's
        # interaction is marked (``hold_usage``)
        self._held: dict[str, list[Write]] = {}
        self.comparisons = ComparisonStore(self.index, self.run_dir)  # across systems
        self._snapshots = threading.local()  # whole-run reads, see ``reading_once``
        if url != self._default_url():
            self.run_file_doc.update({"index_url": _safe_url(url)})

    # -- run.yaml ---------------------------------------------------------------------------

    def _default_url(self) -> str:
        return f"sqlite:///{self.run_dir / layout.INDEX_FILE}"

    @property
    def provenance(self) -> dict[str, Any]:
        """The current contents of run.yaml."""
        return self.run_file_doc.data()

    def stored_config(self) -> dict[str, Any] | None:
        """The resolved (scrubbed) config recorded by ``write_provenance``."""
        return self.run_file_doc.stored_config()

    def write_provenance(self, config: Any, extra: dict[str, Any] | None = None) -> None:
        """Record the resolved config (secrets scrubbed), voxeval/python/platform/package
        versions, git commit, seed and start time (``resumed_at`` on later calls)."""
        self.run_file_doc.write_provenance(config, extra)

    def update_extra(self, changes: Mapping[str, Any]) -> None:
        """Merge ``changes`` into the ``extra`` section of run.yaml."""
        self.run_file_doc.update_extra(changes)

    def add_model_identity(self, kind: str, identity: Mapping[str, Any]) -> None:
        """Record a model/provider identity under ``models.<kind>`` (once per distinct value)."""
        self.run_file_doc.add_model_identity(kind, identity)

    # -- whole-run reads ------------------------------------------------------------------------

    @contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within the block, each whole-run read (every unit, the scores of done units, the
        model usage rows) queries the index once and later calls share that result: a report
        reads them in several places, and its parts then agree with each other. Meant for
        blocks that only read (writes made inside are not seen by the shared results). Only
        the calling thread shares them: other threads using this store read the index."""
        outer = self._snapshot
        if outer is None:
            self._snapshots.current = {}
        try:
            yield
        finally:
            if outer is None:
                self._snapshots.current = None

    @property
    def _snapshot(self) -> dict[str, Any] | None:
        """The calling thread's shared reads inside ``reading_once``, else None."""
        current: dict[str, Any] | None = getattr(self._snapshots, "current", None)
        return current

    def _read_once(self, name: str, read: Callable[[], list[T]]) -> list[T]:
        """``read()``, or inside ``reading_once`` the block's shared result (a new list)."""
        snapshot = self._snapshot
        if snapshot is None:
            return read()
        if name not in snapshot:
            snapshot[name] = read()
        return list(snapshot[name])

    # -- units ------------------------------------------------------------------------------

    def unit_dir(self, unit: UnitLike) -> Path:
        """``items/<item>[@<condition>]/<system>/<trial>/`` (created)."""
        key = (unit.item_id, unit.system, unit.trial, unit.condition)
        path = self._unit_dirs.get(key)
        if path is None:  # a unit asks for its folder several times: build and make it once
            path = self.run_dir
            # from the top down: one mkdir per missing level (``parents=True`` starts at the
            # leaf and fails once per missing level first)
            *parents, leaf = layout.unit_relpath(*key).parts
            for part in parents:
                path = path / part
                if path not in self._parent_dirs:
                    _make_dir(path)
                    self._parent_dirs.add(path)
            path = path / leaf
            _make_dir(path)
            self._unit_dirs[key] = path
        return path

    def clear_unit_dir(self, unit: UnitLike) -> int:
        """Empty the folder of a unit about to run again (resume): what an earlier attempt
        left (a recording cut short by ``kill -9``, its ``error.txt``, scores never committed)
        must not mix with the new attempt's files. Returns the entries removed."""
        path = self.run_dir / layout.unit_relpath(
            unit.item_id, unit.system, unit.trial, unit.condition
        )
        if not path.is_dir():
            return 0
        removed = 0
        for entry in path.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
            removed += 1
        return removed

    def remove_stale_temp_files(self) -> list[Path]:
        """Delete the temporary files that writers killed mid-write left in the run folder
        (only voxeval's own temporary names, only of processes that no longer exist)."""
        return atomic_files.remove_stale_temp_files(self.run_dir)

    def _unit_filter(self, unit: UnitLike) -> Any:
        return (units_table.c.run_id == self.run_id) & (units_table.c.unit_key == unit.key)

    def _end_params(self, unit: UnitLike, values: Mapping[str, Any]) -> dict[str, Any]:
        """``END_UNIT``'s parameters: ``values`` holds status, error, cause, system_fault."""
        return {
            "b_run": self.run_id,
            "b_key": unit.key,
            "b_status": values["status"],
            "b_error": values["error"],
            "b_cause": values["cause"],
            "b_fault": values["system_fault"],
            "b_now": utcnow(),
        }

    def _unit_row(self, unit: UnitLike, seq: int, status: str) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "unit_key": unit.key,
            "seq": seq,
            "item_id": unit.item_id,
            "system": unit.system,
            "trial": unit.trial,
            "condition": unit.condition,
            "category": unit.category,
            "status": status,
            "attempts": 0,
        }

    def record_items(
        self, units: Sequence[UnitLike], meta: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        """Register the plan: every unit (status ``planned`` unless already known) and each
        item once with its category and optional ``meta[item_id]``."""
        meta = meta or {}
        with self.index.write() as conn:
            known_units = set(
                conn.execute(
                    select(units_table.c.unit_key).where(units_table.c.run_id == self.run_id)
                ).scalars()
            )
            known_items = set(
                conn.execute(
                    select(items_table.c.item_id).where(items_table.c.run_id == self.run_id)
                ).scalars()
            )
            seq = self.index.next_seq(conn)
            new_units, new_items = [], []
            for unit in units:
                if unit.key not in known_units:
                    known_units.add(unit.key)
                    new_units.append(self._unit_row(unit, seq, "planned"))
                    seq += 1
                if unit.item_id not in known_items:
                    known_items.add(unit.item_id)
                    item_meta = meta.get(unit.item_id)
                    new_items.append(
                        {
                            "run_id": self.run_id,
                            "item_id": unit.item_id,
                            "category": unit.category,
                            "meta": scrub(dict(item_meta)) if item_meta else None,
                        }
                    )
            if new_units:
                conn.execute(units_table.insert(), new_units)
            if new_items:
                conn.execute(items_table.insert(), new_items)

    def start(self, unit: UnitLike) -> None:
        """Mark a unit ``running`` and count the attempt (one statement in the common case);
        returns once that is committed (shared with other units' writes of the moment)."""
        self.start_later(unit).result()

    def start_later(self, unit: UnitLike) -> Future[None]:
        """``start`` whose commit may still be under way: the future completes with it. The
        unit must not call its system before then (a killed attempt must count)."""
        now = utcnow()
        params = {"b_run": self.run_id, "b_key": unit.key, "b_now": now}
        insert = self._inserting(unit, "running", {"started_at": now})
        return self.committer.submit_later(
            Rows(START_UNIT, self.run_id, unit.key, [params], if_absent=insert)
        )

    def _inserting(
        self, unit: UnitLike, status: str, values: Mapping[str, Any]
    ) -> Callable[[Connection], None]:
        """What an update of ``unit``'s row does when the plan did not register the unit:
        insert it, with ``status``, ``values`` and this attempt counted."""

        def insert(conn: Connection) -> None:
            row = self._unit_row(unit, self.index.next_seq(conn), status)
            conn.execute(INSERT_UNIT, [{**row, **values, "attempts": 1}])

        return insert

    def _defer(self, unit: UnitLike, write: Write) -> None:
        """Queue a bookkeeping write of ``unit`` for the next commit; its outcome is checked
        when the unit completes or fails (``_joined``). While the unit's usage is held
        (``hold_usage``) the write waits for the unit's mark instead."""
        with self._deferred_lock:
            held = self._held.get(unit.key)
            if held is not None:
                held.append(write)
                return
        committed = self.committer.defer(write)
        with self._deferred_lock:
            self._deferred.setdefault(unit.key, []).append(committed)

    def _take_deferred(self, unit: UnitLike) -> list[Future[None]]:
        with self._deferred_lock:
            return self._deferred.pop(unit.key, [])

    @staticmethod
    def _joined(last: Future[None], earlier: list[Future[None]]) -> Future[None]:
        """A future done when ``last`` is; it fails if ``last`` or any of ``earlier`` (queued
        before it, so committed by then) failed."""
        if not earlier:
            return last
        joined: Future[None] = Future()

        def settle(_: Future[None]) -> None:
            for future in [*earlier, last]:
                error = future.exception()
                if error is not None:
                    joined.set_exception(error)
                    return
            joined.set_result(None)

        last.add_done_callback(settle)
        return joined

    def hold_usage(self, unit: UnitLike) -> None:
        """Keep what ``unit`` records from now on (usage, model usage) out of every commit
        until ``mark_interacted_later`` commits it together with the mark, or
        ``release_usage`` queues it as usual. Other units' commits would otherwise take it
        along at any moment, and a run killed then would hold the cost of an interaction
        that resume cannot tell apart from one whose rows were lost."""
        with self._deferred_lock:
            self._held.setdefault(unit.key, [])

    def release_usage(self, unit: UnitLike) -> None:
        """Stop holding ``unit``'s bookkeeping: what was held goes to the next commit (with
        the unit's failure, typically)."""
        with self._deferred_lock:
            held = self._held.pop(unit.key, None)
        for write in held or []:
            self._defer(unit, write)

    def mark_interacted_later(
        self, unit: UnitLike, system_fault: str | None = None, error: str | None = None
    ) -> Future[None]:
        """Mark ``unit``'s interaction finished (status ``interacted``: its artifacts are
        stored, it is not scored yet) in the transaction that commits what the interaction
        cost (the writes held since ``hold_usage``). ``system_fault`` and ``error`` record a
        failure of the system under test, scored later as such. A resumed run scores such a
        unit from its folder instead of asking its system again, and its cost is in the
        index exactly when the mark is."""
        with self._deferred_lock:
            held = self._held.pop(unit.key, [])
        clean_error = redact_env_secrets(error) if error else None
        values = dict(status=INTERACTED, error=clean_error, cause=None, system_fault=system_fault)
        end = self._end_write(unit, INTERACTED, values)
        committed = self.committer.submit_later(*held, end)
        return self._joined(committed, self._take_deferred(unit))

    def flush(self) -> None:
        """Commit the bookkeeping writes still queued (see ``start_deferred``)."""
        self.committer.flush()

    def finish(
        self,
        unit: UnitLike,
        status: str = "done",
        error: str | None = None,
        cause: str | None = None,
    ) -> None:
        """Mark a unit ``done`` (only after its artifacts and scores are stored) or ``failed``;
        a failed unit's traceback-free error and its ``cause`` (the component on our side at
        fault) go to the index, details to ``error.txt``."""
        if status not in ("done", "failed"):
            raise ValueError(f"finish status must be 'done' or 'failed', got {status!r}")
        clean_error = redact_env_secrets(error) if error else None
        values = {"status": status, "error": clean_error, "cause": cause, "system_fault": None}

        # with the unit's queued bookkeeping (usage), which must not be lost with it
        committed = self.committer.submit_later(self._end_write(unit, status, values))
        self._joined(committed, self._take_deferred(unit)).result()

    def record_failure(self, unit: UnitLike, exc: BaseException, cause: str | None = None) -> str:
        """Store ``error.txt`` (full traceback) in the unit folder and mark the unit failed
        with ``cause``. Returns the one-line error recorded in the index."""
        message = f"{type(exc).__name__}: {exc}"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        atomic_files.write_text_atomic(
            self.unit_dir(unit) / layout.ERROR_FILE, redact_env_secrets(tb)
        )
        self.finish(unit, "failed", message, cause=cause)
        return message

    def is_finished(self, unit: UnitLike) -> bool:
        with self.index.read() as conn:
            status = conn.execute(
                select(units_table.c.status).where(self._unit_filter(unit))
            ).scalar()
        return status == "done"

    def finished_keys(self) -> set[str]:
        with self.index.read() as conn:
            return set(
                conn.execute(
                    select(units_table.c.unit_key).where(
                        (units_table.c.run_id == self.run_id) & (units_table.c.status == "done")
                    )
                ).scalars()
            )

    def units(self, status: str | None = None) -> list[UnitRecord]:
        """Units in plan order, optionally only those with ``status``."""
        if self._snapshot is not None:
            every = self._read_once("units", self._read_units)
            return every if status is None else [u for u in every if u.status == status]
        return self._read_units(status)

    def _read_units(self, status: str | None = None) -> list[UnitRecord]:
        self.flush()  # rows still queued for the next commit
        query = select(units_table).where(units_table.c.run_id == self.run_id)
        if status is not None:
            query = query.where(units_table.c.status == status)
        with self.index.read() as conn:
            rows = conn.execute(query.order_by(units_table.c.seq)).mappings().all()
        return [
            UnitRecord(
                item_id=r["item_id"],
                system=r["system"],
                trial=int(r["trial"]),
                condition=r["condition"],
                category=r["category"],
                status=r["status"],
                error=r["error"],
                attempts=int(r["attempts"] or 0),
                cause=r["cause"],
                system_fault=r["system_fault"],
            )
            for r in rows
        ]

    def status_counts(self) -> dict[str, dict[str, Any]]:
        """Per system: ``{"done": n, "failed": n, "pending": n, "system_faults": {cause: n},
        "failed_by_cause": {cause: n}, "pending_metrics": n}``. ``pending`` counts units not
        finished (planned or running); ``system_faults`` the done units whose system under
        test failed (scored as failures); ``failed_by_cause`` the failed units by the part on
        our side at fault; ``pending_metrics`` the scores of done units still to be retried."""
        out: dict[str, dict[str, Any]] = {}

        def entry(system: str) -> dict[str, Any]:
            if system not in out:
                out[system] = {
                    "done": 0,
                    "failed": 0,
                    "pending": 0,
                    "system_faults": {},
                    "failed_by_cause": {},
                    "pending_metrics": 0,
                }
            return out[system]

        for unit in self.units():
            counts = entry(unit.system)
            bucket = unit.status if unit.status in ("done", "failed") else "pending"
            counts[bucket] += 1
            if bucket == "failed":
                cause = unit.cause or "unknown"
                counts["failed_by_cause"][cause] = counts["failed_by_cause"].get(cause, 0) + 1
            elif bucket == "done" and unit.system_fault:
                faults = counts["system_faults"]
                faults[unit.system_fault] = faults.get(unit.system_fault, 0) + 1
        for system, n in self._pending_score_counts().items():
            entry(system)["pending_metrics"] = n
        return out

    def _pending_score_counts(self) -> dict[str, int]:
        u, s = units_table, scores_table
        query = (
            select(u.c.system, func.count())
            .join(s, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where((u.c.run_id == self.run_id) & (u.c.status == "done") & (s.c.pending == 1))
            .group_by(u.c.system)
        )
        with self.index.read() as conn:
            return {system: int(n) for system, n in conn.execute(query).all()}

    def pending_metrics(self) -> dict[str, list[str]]:
        """``{unit_key: [metric, ...]}``: the pending scores of done units, to retry."""
        u, s = units_table, scores_table
        query = (
            select(s.c.unit_key, s.c.metric)
            .join(u, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where((u.c.run_id == self.run_id) & (u.c.status == "done") & (s.c.pending == 1))
            .order_by(u.c.seq, s.c.metric)
        )
        out: dict[str, list[str]] = defaultdict(list)
        with self.index.read() as conn:
            for key, metric in conn.execute(query).all():
                out[key].append(metric)
        return dict(out)

    def item_meta(self) -> dict[str, dict[str, Any]]:
        with self.index.read() as conn:
            rows = conn.execute(
                select(items_table.c.item_id, items_table.c.meta).where(
                    items_table.c.run_id == self.run_id
                )
            ).all()
        return {item_id: dict(meta or {}) for item_id, meta in rows}

    # -- scores -----------------------------------------------------------------------------

    def save_scores(self, unit: UnitLike, scores: Mapping[str, Score]) -> list[str]:
        """Merge re-scored ``scores`` into the unit's ``scores.json`` and the index: a metric
        scored again replaces its previous value, other metrics are kept — except that a
        stored value that ran is never replaced by a pending or not-run result (a judge that
        is down must not erase good scores). Returns the metrics whose old value was kept."""
        ran_before = self._ran_metrics(unit, list(scores))
        kept = [m for m, score in scores.items() if m in ran_before and not score.ran]
        fresh = {m: score for m, score in scores.items() if m not in kept}
        if fresh:
            rows = self._write_scores_file(unit, fresh)
            committed = self.committer.submit_later(*self._score_writes(unit, fresh, rows))
            # with what the re-scoring cost (a judge's usage), queued before
            self._joined(committed, self._take_deferred(unit)).result()
        else:
            earlier = self._take_deferred(unit)
            self.flush()
            for committed in earlier:
                committed.result()  # raises what a queued write raised
        return kept

    def _ran_metrics(self, unit: UnitLike, metrics: list[str]) -> set[str]:
        s = scores_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(s.c.metric).where(
                    (s.c.run_id == self.run_id)
                    & (s.c.unit_key == unit.key)
                    & (s.c.metric.in_(metrics))
                    & s.c.value.is_not(None)
                    & s.c.error.is_(None)
                )
            ).scalars()
            return set(rows)

    def complete(
        self,
        unit: UnitLike,
        scores: Mapping[str, Score],
        system_fault: str | None = None,
        error: str | None = None,
    ) -> None:
        """Store the scores of a fresh interaction and mark the unit ``done`` in one index
        transaction: the unit becomes ``done`` exactly when its scores are committed.
        ``system_fault`` (with its message in ``error``) records that the system under test
        failed and the unit was scored as a failure."""
        self.complete_later(unit, scores, system_fault, error).result()

    def complete_later(
        self,
        unit: UnitLike,
        scores: Mapping[str, Score],
        system_fault: str | None = None,
        error: str | None = None,
    ) -> Future[None]:
        """``complete`` whose commit may still be under way: the future completes when the
        unit is ``done`` in the index (its commit is shared with other units finishing
        now). Only then may the unit count as finished."""
        rows = self._write_scores_file(unit, scores)
        clean_error = redact_env_secrets(error) if error else None
        ended = dict(status="done", error=clean_error, cause=None, system_fault=system_fault)
        writes = self._score_writes(unit, scores, rows)
        # the scores and the end in one transaction: done exactly when the scores are in
        committed = self.committer.submit_later(*writes, self._end_write(unit, "done", ended))
        return self._joined(committed, self._take_deferred(unit))

    def _end_write(self, unit: UnitLike, status: str, values: Mapping[str, Any]) -> Rows:
        """``END_UNIT`` for ``unit`` (``values``: status, error, cause, system_fault); a unit
        the plan did not register is inserted with them."""
        params = self._end_params(unit, values)
        insert = self._inserting(unit, status, values)
        return Rows(END_UNIT, self.run_id, unit.key, [params], if_absent=insert)

    def _write_scores_file(
        self, unit: UnitLike, scores: Mapping[str, Score]
    ) -> list[dict[str, Any]]:
        path = self.unit_dir(unit) / layout.SCORES_FILE
        existing = atomic_files.read_json(path) or {}
        entries = {name: scrub(s.to_dict()) for name, s in scores.items()}  # scrubbed once
        merged = record_data(UnitScores, {**existing, **entries}, path)  # validates the file
        atomic_files.write_record_json_atomic(path, merged)
        now = utcnow()
        rows = [
            {
                "run_id": self.run_id,
                "unit_key": unit.key,
                "metric": name,
                "value": None if score.value is None else float(score.value),
                "passed": None if score.passed is None else int(bool(score.passed)),
                "error": redact_env_secrets(score.error) if score.error else None,
                "details": entries[name]["details"] or None,
                "pending": int(score.pending),
                "scored_at": now,
            }
            for name, score in scores.items()
        ]
        return rows

    def _score_writes(
        self, unit: UnitLike, scores: Mapping[str, Score], rows: list[dict[str, Any]]
    ) -> list[Rows]:
        """The writes that replace the unit's index rows of ``scores`` with ``rows``."""
        gone = [{"b_run": self.run_id, "b_key": unit.key, "b_metric": m} for m in scores]
        return [
            Rows(DELETE_SCORE, self.run_id, unit.key, gone),
            Rows(INSERT_SCORES, self.run_id, unit.key, rows),
        ]

    def load_scores(
        self, system: str | None = None, *, only_done: bool = True, unit_key: str | None = None
    ) -> list[ScoreRow]:
        """Score rows in plan order; by default only for units whose status is ``done``;
        ``unit_key`` keeps one unit's."""
        if system is None and only_done and unit_key is None:
            return self._read_once("scores", self._read_scores)
        return self._read_scores(system, only_done=only_done, unit_key=unit_key)

    def _read_scores(
        self, system: str | None = None, *, only_done: bool = True, unit_key: str | None = None
    ) -> list[ScoreRow]:
        u, s = units_table, scores_table
        query = (
            select(
                u.c.item_id,
                u.c.system,
                u.c.trial,
                u.c.condition,
                u.c.category,
                s.c.metric,
                s.c.value,
                s.c.passed,
                s.c.error,
                s.c.details,
                s.c.pending,
            )
            .join(s, (s.c.run_id == u.c.run_id) & (s.c.unit_key == u.c.unit_key))
            .where(u.c.run_id == self.run_id)
            .order_by(u.c.seq, s.c.metric)
        )
        if system is not None:
            query = query.where(u.c.system == system)
        if only_done:
            query = query.where(u.c.status == "done")
        if unit_key is not None:
            query = query.where(u.c.unit_key == unit_key)
        with self.index.read() as conn:
            rows = conn.execute(query).all()
        return [
            ScoreRow(
                item_id=r[0],
                system=r[1],
                trial=int(r[2]),
                condition=r[3],
                category=r[4],
                metric=r[5],
                value=r[6],
                passed=None if r[7] is None else bool(r[7]),
                error=r[8],
                details=dict(r[9] or {}),
                pending=bool(r[10]),
            )
            for r in rows
        ]

    def unit_scores(self, unit_key: str) -> dict[str, ScoreRow]:
        """``{metric: row}`` of one unit, whatever its status (comparisons read these)."""
        return {row.metric: row for row in self.load_scores(only_done=False, unit_key=unit_key)}

    # -- usage ------------------------------------------------------------------------------

    def record_component_usage(
        self, unit: UnitLike, provider: str, used: ComponentUsage, parse_failures: int = 0
    ) -> None:
        """``record_usage`` for what one component sent while the unit ran or was scored
        (a ``usage_ledger`` entry): its calls, tokens, cost, requests, retries and timeouts,
        the audio its models heard and spoke, and its breakdown by model."""
        self.record_usage(
            unit,
            provider,
            used.calls,
            used.prompt_tokens,
            used.completion_tokens,
            used.cost_usd,
            parse_failures,
            requests=used.requests,
            retries=used.retries,
            timeouts=used.timeouts,
            audio={
                "prompt_audio_tokens": used.prompt_audio_tokens,
                "completion_audio_tokens": used.completion_audio_tokens,
                "audio_in_s": used.audio_in_s,
                "audio_out_s": used.audio_out_s,
            },
        )
        self.record_model_usage(unit, provider, used.models)

    def record_model_usage(
        self, unit: UnitLike, component: str, models: Mapping[tuple[str, str, str], Any]
    ) -> None:
        """One ``model_usage`` row per (kind, provider, model) of ``component`` (values are
        ``ModelUsage``-like: the amounts of ``MODEL_AMOUNTS`` as attributes)."""
        if not models:
            return
        now = utcnow()
        rows = [
            {
                "run_id": self.run_id,
                "unit_key": unit.key,
                "system": unit.system,
                "component": component,
                "kind": kind,
                "provider": provider,
                "model": model,
                **{name: getattr(use, name) for name in MODEL_AMOUNTS},
                "recorded_at": now,
            }
            for (kind, provider, model), use in models.items()
        ]
        # committed with the unit's completion (or the next write before it)
        self._defer(unit, Rows(INSERT_MODEL_USAGE, self.run_id, unit.key, rows))

    def record_usage(
        self,
        unit: UnitLike,
        provider: str,
        calls: int,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float | None,
        parse_failures: int = 0,
        *,
        requests: int = 0,
        retries: int = 0,
        timeouts: int = 0,
        audio: Mapping[str, float] | None = None,
    ) -> None:
        """Append one usage record (a retried or re-scored unit adds more: all calls cost).
        ``calls`` are logical calls (a reply, a judge call, a decode); ``requests`` the HTTP
        requests they sent, ``retries`` and ``timeouts`` among them."""
        values = usage_values(
            provider,
            calls,
            prompt_tokens,
            completion_tokens,
            cost_usd,
            parse_failures,
            requests=requests,
            retries=retries,
            timeouts=timeouts,
            audio=audio,
        )
        amounts = values.pop("audio")
        row = {
            "run_id": self.run_id,
            "unit_key": unit.key,
            "system": unit.system,
            **values,
            **amounts,
            "recorded_at": utcnow(),
        }
        # committed with the unit's completion (or the next write before it)
        self._defer(unit, Rows(INSERT_USAGE, self.run_id, unit.key, [row]))

    def usage_summary(self) -> dict[str, Any]:
        """Totals, per provider and per system (see ``voxeval.store.usage``)."""
        self.flush()  # rows still queued for the next commit
        t = usage_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(
                    t.c.system,
                    t.c.provider,
                    t.c.calls,
                    t.c.prompt_tokens,
                    t.c.completion_tokens,
                    t.c.cost_usd,
                    t.c.parse_failures,
                    t.c.requests,
                    t.c.retries,
                    t.c.timeouts,
                    t.c.prompt_audio_tokens,
                    t.c.completion_audio_tokens,
                    t.c.audio_in_s,
                    t.c.audio_out_s,
                ).where(t.c.run_id == self.run_id)
            ).all()
        summary = summarize_usage(tuple(r) for r in rows)
        summary["by_model"] = summarize_model_usage(self.model_usage_rows())
        return summary

    def model_usage_rows(self) -> list[dict[str, Any]]:
        """Every ``model_usage`` row of the run (plan order is not kept: records append)."""
        return self._read_once("model_usage", self._read_model_usage)

    def _read_model_usage(self) -> list[dict[str, Any]]:
        self.flush()  # rows still queued for the next commit
        t = model_usage_table
        names = ("unit_key", "system", "component", "kind", "provider", "model", *MODEL_AMOUNTS)
        query = select(*(t.c[name] for name in names))
        with self.index.read() as conn:
            rows = conn.execute(query.where(t.c.run_id == self.run_id).order_by(t.c.id)).all()
        return [dict(zip(names, row, strict=True)) for row in rows]

    # -- maintenance ------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every unit, score, usage record, comparison and artifact of this run
        (``--no-resume``).
        Refuses, deleting nothing, when the folder was not a voxeval run when opened."""
        if self._foreign:
            raise _foreign_folder_error(self.run_dir)
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
        self._unit_dirs.clear()
        self._parent_dirs.clear()
        for folder in (self.items_dir, self.report_dir):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True, exist_ok=True)
        self.run_file_doc.drop("started_at", "resumed_at", "models")

    def close(self) -> None:
        self.index.dispose()


def _make_dir(path: Path) -> None:
    """Create the folder ``path`` (its parent exists); an existing folder is fine."""
    try:
        path.mkdir()
    except FileExistsError:
        if not path.is_dir():
            raise
