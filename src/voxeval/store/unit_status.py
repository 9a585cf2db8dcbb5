"""The work units of a run in the index's ``units`` table: the plan, each unit's status
(planned, running, interacted, done, failed) and how it ended.

Resume contract: a unit counts as finished only when its status is ``done``; the runner
writes every artifact (atomically) and the unit's scores commit in the same transaction as
its ``done`` (``complete``), so a process killed at any moment loses at most the units in
flight."""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import TypedDict

from sqlalchemy import select

from voxeval import atomic_files
from voxeval.json_types import JSONReadObject, JSONValue
from voxeval.redaction import redact_env_secrets, scrub
from voxeval.scoring.score import Score
from voxeval.store import layout
from voxeval.store.index import RunIndex, items_table, units_table
from voxeval.store.records import INTERACTED, UnitLike, UnitRecord
from voxeval.store.run_folder import RunFolder
from voxeval.store.score_index import ScoreIndex
from voxeval.store.shared_reads import SharedReads
from voxeval.store.unit_rows import UnitValues, end_write, unit_row
from voxeval.store.unit_writes import UnitWrites


class SystemCounts(TypedDict):
    """One system's units by status (``UnitStatus.status_counts``)."""

    done: int
    failed: int
    pending: int  # planned, running or interacted
    system_faults: dict[str, int]  # done units whose system under test failed, by cause
    failed_by_cause: dict[str, int]  # failed units by the part on our side at fault
    pending_metrics: int  # scores of done units still to be retried


class UnitStatus:
    """The units of one run (``RunStore.units``)."""

    def __init__(
        self,
        index: RunIndex,
        writes: UnitWrites,
        folder: RunFolder,
        scores: ScoreIndex,
        reads: SharedReads,
    ) -> None:
        self.index = index
        self.writes = writes
        self.folder = folder
        self.scores = scores
        self.reads = reads

    # -- the plan ---------------------------------------------------------------------------

    def record_items(
        self, units: Sequence[UnitLike], meta: Mapping[str, JSONReadObject] | None = None
    ) -> None:
        """Register the plan: every unit (status ``planned`` unless already known) and each
        item once with its category and optional ``meta[item_id]``."""
        meta = meta or {}
        run_id = self.index.run_id
        with self.index.write() as conn:
            known_units = set(
                conn.execute(
                    select(units_table.c.unit_key).where(units_table.c.run_id == run_id)
                ).scalars()
            )
            known_items = set(
                conn.execute(
                    select(items_table.c.item_id).where(items_table.c.run_id == run_id)
                ).scalars()
            )
            seq = self.index.next_seq(conn)
            new_units, new_items = [], []
            for unit in units:
                if unit.key not in known_units:
                    known_units.add(unit.key)
                    new_units.append(unit_row(run_id, unit, seq, "planned"))
                    seq += 1
                if unit.item_id not in known_items:
                    known_items.add(unit.item_id)
                    item_meta = meta.get(unit.item_id)
                    new_items.append(
                        {
                            "run_id": run_id,
                            "item_id": unit.item_id,
                            "category": unit.category,
                            "meta": scrub(dict(item_meta)) if item_meta else None,
                        }
                    )
            if new_units:
                conn.execute(units_table.insert(), new_units)
            if new_items:
                conn.execute(items_table.insert(), new_items)

    # -- how a unit ends --------------------------------------------------------------------

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
        rows = self.scores.write_file(unit, scores)
        clean_error = redact_env_secrets(error) if error else None
        ended = dict(status="done", error=clean_error, cause=None, system_fault=system_fault)
        writes = self.scores.replace_writes(unit, scores, rows)
        # the scores and the end in one transaction: done exactly when the scores are in
        end = end_write(self.index, unit, "done", ended)
        return self.writes.with_deferred(unit, self.writes.submit_later(*writes, end))

    def hold_usage(self, unit: UnitLike) -> None:
        """Keep what ``unit`` records from now on (usage, model usage) out of every commit
        until ``mark_interacted_later`` commits it together with the mark, or
        ``release_usage`` queues it as usual. Other units' commits would otherwise take it
        along at any moment, and a run killed then would hold the cost of an interaction
        that resume cannot tell apart from one whose rows were lost."""
        self.writes.hold(unit)

    def release_usage(self, unit: UnitLike) -> None:
        """Stop holding ``unit``'s bookkeeping: what was held goes to the next commit (with
        the unit's failure, typically)."""
        self.writes.release(unit)

    def mark_interacted_later(
        self, unit: UnitLike, system_fault: str | None = None, error: str | None = None
    ) -> Future[None]:
        """Mark ``unit``'s interaction finished (status ``interacted``: its artifacts are
        stored, it is not scored yet) in the transaction that commits what the interaction
        cost (the writes held since ``hold_usage``). ``system_fault`` and ``error`` record a
        failure of the system under test, scored later as such. A resumed run scores such a
        unit from its folder instead of asking its system again, and its cost is in the
        index exactly when the mark is."""
        held = self.writes.take_held(unit)
        clean_error = redact_env_secrets(error) if error else None
        values = dict(status=INTERACTED, error=clean_error, cause=None, system_fault=system_fault)
        end = end_write(self.index, unit, INTERACTED, values)
        return self.writes.with_deferred(unit, self.writes.submit_later(*held, end))

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
        values: UnitValues = {
            "status": status,
            "error": clean_error,
            "cause": cause,
            "system_fault": None,
        }
        # with the unit's queued bookkeeping (usage), which must not be lost with it
        committed = self.writes.submit_later(end_write(self.index, unit, status, values))
        self.writes.with_deferred(unit, committed).result()

    def record_failure(self, unit: UnitLike, exc: BaseException, cause: str | None = None) -> str:
        """Store ``error.txt`` (full traceback) in the unit folder and mark the unit failed
        with ``cause``. Returns the one-line error recorded in the index."""
        message = f"{type(exc).__name__}: {exc}"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        atomic_files.write_text_atomic(
            self.folder.unit_dir(unit) / layout.ERROR_FILE, redact_env_secrets(tb)
        )
        self.finish(unit, "failed", message, cause=cause)
        return message

    # -- reads ------------------------------------------------------------------------------

    def is_finished(self, unit: UnitLike) -> bool:
        u = units_table
        with self.index.read() as conn:
            status = conn.execute(
                select(u.c.status).where(
                    (u.c.run_id == self.index.run_id) & (u.c.unit_key == unit.key)
                )
            ).scalar()
        return status == "done"

    def finished_keys(self) -> set[str]:
        with self.index.read() as conn:
            return set(
                conn.execute(
                    select(units_table.c.unit_key).where(
                        (units_table.c.run_id == self.index.run_id)
                        & (units_table.c.status == "done")
                    )
                ).scalars()
            )

    def records(self, status: str | None = None) -> list[UnitRecord]:
        """Units in plan order, optionally only those with ``status``."""
        if self.reads.active:
            every = self.reads.read("units", self._read)
            return every if status is None else [u for u in every if u.status == status]
        return self._read(status)

    def _read(self, status: str | None = None) -> list[UnitRecord]:
        self.writes.flush()  # rows still queued for the next commit
        query = select(units_table).where(units_table.c.run_id == self.index.run_id)
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

    def status_counts(self) -> dict[str, SystemCounts]:
        """Per system: ``{"done": n, "failed": n, "pending": n, "system_faults": {cause: n},
        "failed_by_cause": {cause: n}, "pending_metrics": n}``. ``pending`` counts units not
        finished (planned or running); ``system_faults`` the done units whose system under
        test failed (scored as failures); ``failed_by_cause`` the failed units by the part on
        our side at fault; ``pending_metrics`` the scores of done units still to be retried."""
        out: dict[str, SystemCounts] = {}

        def entry(system: str) -> SystemCounts:
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

        for unit in self.records():
            counts = entry(unit.system)
            if unit.status == "done":
                counts["done"] += 1
                if unit.system_fault:
                    faults = counts["system_faults"]
                    faults[unit.system_fault] = faults.get(unit.system_fault, 0) + 1
            elif unit.status == "failed":
                counts["failed"] += 1
                cause = unit.cause or "unknown"
                counts["failed_by_cause"][cause] = counts["failed_by_cause"].get(cause, 0) + 1
            else:
                counts["pending"] += 1
        for system, n in self.scores.pending_counts().items():
            entry(system)["pending_metrics"] = n
        return out

    def item_meta(self) -> dict[str, dict[str, JSONValue]]:
        with self.index.read() as conn:
            rows = conn.execute(
                select(items_table.c.item_id, items_table.c.meta).where(
                    items_table.c.run_id == self.index.run_id
                )
            ).all()
        return {item_id: dict(meta or {}) for item_id, meta in rows}
