"""One unit's work away from the index: what a remote worker does with a unit, and how the
driver commits what came back.

A worker writes the unit's artifacts into the shared run folder (same layout as a local run)
but never writes the index: its store (``journal_store``) keeps the index writes the protocol
asks for (attempt starts, usage records, model identities) in a journal that travels back
with the unit's scores, and the driver, the index's one writer, applies them and commits the
unit (``commit_result``). So SQLite stays safe with many workers and PostgreSQL by URL works
the same way.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from voxeval import atomic_files
from voxeval.api.context import RunContext
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.config import RunConfig
from voxeval.errors import SystemFault
from voxeval.json_types import JSONReadObject
from voxeval.protocols.contract import PROTOCOLS, WorkUnit
from voxeval.providers.http.openai_http import watch_requests
from voxeval.providers.usage.usage_meter import ModelKey, ModelUsage
from voxeval.redaction import redact_env_secrets
from voxeval.runner.faults import RetryPolicy, failure_cause, interact_with_retries
from voxeval.runner.sent_log import SENT_LOG, LoggedRequests, logged_requests
from voxeval.runner.sent_log import usage_component as usage_component  # (moved there)
from voxeval.scoring.score import Score
from voxeval.store import RunStore, layout
from voxeval.store.recorder import RunRecorder
from voxeval.store.records import UnitLike
from voxeval.store.usage import MODEL_AMOUNTS, UsageValues

# Journal entries: ("start", {}), ("usage", record_usage keyword arguments),
# ("model_usage", {"component": ..., "models": [[kind, provider, model, {amounts}], ...]}),
# ("identity", {"kind": ..., "identity": {...}}).
JournalEntry = tuple[str, dict[str, Any]]


class JournalRecorder(RunRecorder):
    """A worker's recorder: the index writes a unit asks for are journaled per unit for the
    driver (``take_journal``), model identities with the next unit taken."""

    waits_for_commit: ClassVar[bool] = False  # a journal entry is appended at once

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._journals: dict[str, list[JournalEntry]] = {}
        self._identities: list[JournalEntry] = []

    def _log(self, unit: UnitLike, entry: JournalEntry) -> None:
        with self._lock:
            self._journals.setdefault(unit.key, []).append(entry)

    def take_journal(self, unit: UnitLike) -> list[JournalEntry]:
        """The unit's journal, plus the model identities recorded since the last take."""
        with self._lock:
            entries = self._identities + self._journals.pop(unit.key, [])
            self._identities = []
        return entries

    def start(self, unit: UnitLike) -> None:
        self._log(unit, ("start", {}))

    def start_later(self, unit: UnitLike) -> Future[None]:
        self.start(unit)
        journaled: Future[None] = Future()
        journaled.set_result(None)
        return journaled

    def _record_usage_values(self, unit: UnitLike, values: UsageValues) -> None:
        self._log(unit, ("usage", values))

    def record_model_usage(
        self, unit: UnitLike, component: str, models: Mapping[ModelKey, ModelUsage]
    ) -> None:
        if not models:
            return
        rows = [
            [kind, provider, model, {name: getattr(use, name) for name in MODEL_AMOUNTS}]
            for (kind, provider, model), use in models.items()
        ]
        self._log(unit, ("model_usage", {"component": component, "models": rows}))

    def add_model_identity(self, kind: str, identity: JSONReadObject) -> None:
        with self._lock:
            self._identities.append(("identity", {"kind": kind, "identity": dict(identity)}))


def journal_store(run_dir: Path | str) -> RunStore:
    """A worker's view of the run folder: artifacts go to disk as in a local run; the index
    is not opened and the index writes are journaled per unit for the driver."""
    return RunStore(run_dir, worker_recorder=JournalRecorder())


def journal_of(store: RunStore) -> JournalRecorder:
    """The journal of a worker's store (``journal_store``)."""
    if not isinstance(store.recorder, JournalRecorder):
        raise TypeError("a worker's unit needs a worker_context (a journal_store)")
    return store.recorder


@dataclass
class UnitResult:
    """What a worker sends back for one unit: its scores (or the failure on our side), the
    journal of index writes, and where it ran."""

    key: str
    journal: list[JournalEntry] = field(default_factory=list)
    scores: dict[str, Score] | None = None
    system_fault: str | None = None  # done, but the system under test failed (its cause)
    error: str | None = None  # the system fault's message, or our side's failure
    cause: str | None = None  # failed on our side: the part at fault
    worker: str = ""

    @property
    def failed(self) -> bool:
        return self.scores is None


def worker_context(config: RunConfig, run_dir: Path | str, console: Console) -> RunContext:
    """A worker's run context over a ``journal_store`` (a fresh protocol instance: protocols
    load their suite lazily from the shared folder)."""
    store = journal_store(run_dir)
    suite = resolve_suite(config.suite, run_dir=store.run_dir)
    return RunContext(
        config=config,
        store=store,
        seed=config.seed,
        console=console,
        suite=suite,
        protocol=PROTOCOLS.lookup(suite.protocol)(),
    )


def run_unit(
    ctx: RunContext,
    unit: WorkUnit,
    retry: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    worker: str = "",
    dispatch: str = "",
) -> UnitResult:
    """Interact with and score ``unit`` like the local executor does, without touching the
    index. The unit's folder is emptied first: the unit is not done (else it would not have
    been sent), so anything there is what an earlier attempt left — an attempt cut short by
    a dead worker included. ``dispatch`` identifies this sending of the unit: an attempt
    that finds it left in the folder is the executor's re-run of a dead worker's attempt,
    which the driver never heard of, so it journals that attempt's start too."""
    store = ctx.store
    journal_of(store)  # a worker's store: its index writes go to the journal
    unit_dir = store.folder.unit_dir(unit)
    marker = unit_dir / DISPATCH_FILE
    sent = unit_dir / SENT_LOG
    rerun = bool(dispatch) and _read_text(marker) == dispatch
    # the requests the dead attempts of this sending had sent (they never reported them)
    lost_lines = _read_bytes(sent) if rerun else b""
    store.folder.clear_unit_dir(unit)
    if lost_lines:  # kept until this attempt reports them: it may die too
        atomic_files.write_bytes_atomic(sent, lost_lines)
    if dispatch:
        atomic_files.write_text_atomic(marker, dispatch)
    if rerun:
        store.recorder.start(unit)  # the dead worker's attempt (the driver counted one start)
        record_lost_requests(store, unit, logged_requests(unit_dir) if lost_lines else {})
    try:
        with watch_requests(LoggedRequests(unit_dir, unit.system)):
            fault = interact_with_retries(ctx, unit, retry, sleep)
        scores = ctx.require_protocol().score(unit, ctx, ctx.config.metrics)
    except Exception as exc:
        return failed_result(store, unit, exc, worker)
    finally:
        marker.unlink(missing_ok=True)
        sent.unlink(missing_ok=True)  # in this attempt's journal from here on
    return scored_result(store, unit, scores, fault, worker)


# The id of the sending of a unit whose attempt is under way in a worker (see ``run_unit``).
DISPATCH_FILE = "dispatch.txt"


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return b""


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return None


def scored_result(
    store: RunStore,
    unit: WorkUnit,
    scores: dict[str, Score],
    fault: SystemFault | None,
    worker: str,
) -> UnitResult:
    """The result of a unit that ran and was scored (``fault``: its system failed)."""
    return UnitResult(
        unit.key,
        journal_of(store).take_journal(unit),
        scores=scores,
        system_fault=fault.cause if fault else None,
        error=str(fault) if fault else None,
        worker=worker,
    )


def failed_result(store: RunStore, unit: WorkUnit, exc: BaseException, worker: str) -> UnitResult:
    """The result of a unit that failed on our side; its traceback goes to ``error.txt``."""
    message = f"{type(exc).__name__}: {exc}"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    atomic_files.write_text_atomic(
        store.folder.unit_dir(unit) / layout.ERROR_FILE, redact_env_secrets(text)
    )
    return UnitResult(
        unit.key,
        journal_of(store).take_journal(unit),
        error=message,
        cause=failure_cause(exc),
        worker=worker,
    )


def apply_journal(store: RunStore, unit: WorkUnit, journal: list[JournalEntry]) -> None:
    """Replay a worker's index writes. The driver already marked the unit started when it
    sent it, so the journal's first start is that same attempt."""
    starts = 0
    for kind, values in journal:
        if kind == "start":
            starts += 1
            if starts > 1:
                store.recorder.start(unit)
        elif kind == "usage":
            store.recorder.record_usage(unit, **values)
        elif kind == "model_usage":
            models = {(row[0], row[1], row[2]): ModelUsage(**row[3]) for row in values["models"]}
            store.recorder.record_model_usage(unit, values["component"], models)
        elif kind == "identity":
            store.recorder.add_model_identity(values["kind"], values["identity"])
        else:
            raise ValueError(f"unknown journal entry {kind!r} for {unit.key}")


WORKER_CAUSE = "worker"  # a unit whose worker kept dying


def record_lost_requests(store: RunStore, unit: WorkUnit, lost: Mapping[str, int]) -> None:
    """The requests an attempt had sent when its worker died, per component: usage rows of 0
    calls (no call finished, its tokens and cost are unknown), so ``requests`` still equals
    what the servers received. Committed with the unit's next write (its next start, or its
    failure)."""
    for component, requests in sorted(lost.items()):
        if requests > 0:
            store.recorder.record_usage(unit, component, 0, 0, 0, None, requests=requests)


def record_remote_failure(store: RunStore, unit: WorkUnit, exc: Exception, died: bool) -> str:
    """The driver's record of a unit that did not come back done: failed on our side in its
    worker (which wrote its ``error.txt``), its worker died (``died``: cause ``worker``), or
    the driver's own error. Returns the one-line error recorded in the index."""
    if isinstance(exc, UnitFailedRemotely):
        store.units.finish(unit, "failed", exc.message, cause=exc.cause)
        return exc.message
    return store.units.record_failure(unit, exc, cause=WORKER_CAUSE if died else failure_cause(exc))


def with_concurrency(ctx: RunContext, concurrency: int) -> RunContext:
    """``ctx`` with another ``concurrency`` (the driver's units in flight)."""
    return dataclasses.replace(
        ctx, config=ctx.config.model_copy(update={"concurrency": concurrency})
    )


class UnitFailedRemotely(Exception):
    """A unit that failed on our side in a worker (already has its error.txt)."""

    def __init__(self, message: str, cause: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


def commit_result(store: RunStore, unit: WorkUnit, result: UnitResult) -> None:
    """Write a worker's result to the index (the driver's job). A unit that failed on our side
    raises ``UnitFailedRemotely`` for the executor's error handler to record."""
    commit_result_later(store, unit, result).result()


def commit_result_later(store: RunStore, unit: WorkUnit, result: UnitResult) -> Future[None]:
    """``commit_result`` whose commit may still be under way (shared with other units
    finishing now): the unit is done when the future is."""
    apply_journal(store, unit, result.journal)
    if result.scores is None:
        raise UnitFailedRemotely(result.error or "failed in a worker", result.cause)
    # done exactly when its scores are committed; a system fault is a scored result
    return store.units.complete_later(
        unit, result.scores, system_fault=result.system_fault, error=result.error
    )
