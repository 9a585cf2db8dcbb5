"""Run a config end to end: plan, skip finished units, interact + score each unit as an
asyncio task (network waits hold no thread; CPU work runs in a bounded thread pool), record
every outcome, write the report. Also re-scoring of a finished run."""

from __future__ import annotations

import asyncio
import inspect
import math
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from voxeval.api.context import RunContext
from voxeval.benchmarks.suite_info import resolve_suite, save_suite_copy
from voxeval.config import RunConfig, parse_run_config
from voxeval.errors import SystemFault
from voxeval.json_types import JSONObject, JSONReadObject
from voxeval.protocols.contract import PROTOCOLS, WorkUnit
from voxeval.providers.http.openai_http import watch_requests
from voxeval.providers.runtime.async_dispatch import await_future, run_blocking
from voxeval.redaction import register_config_secrets, scrub
from voxeval.report.writer import write_report
from voxeval.runner.collector_pause import collector_tuned
from voxeval.runner.comparison_steps import run_comparison_steps
from voxeval.runner.event_loop import unit_loop
from voxeval.runner.faults import (
    DEFAULT_RETRY,
    RetryPolicy,
    failure_cause,
    interact_with_retries_async,
    warn_with_examples,
)
from voxeval.runner.interaction_mark import (
    SystemCallSlots,
    slots_held_until_marked,
    stored_fault,
)
from voxeval.runner.plan_check import validate_plan, validate_scoring
from voxeval.runner.process_executor import run_units_in_processes, start_worker_server
from voxeval.runner.ray_executor import run_units_on_ray
from voxeval.runner.sent_log import SENT_LOG, LoggedRequests, logged_requests
from voxeval.runner.unit_work import record_lost_requests
from voxeval.store import RunReader, RunStore
from voxeval.store.provenance import now_iso
from voxeval.store.records import INTERACTED, UnitRecord
from voxeval.store.run_store import refuse_to_reset_foreign_folder
from voxeval.systems.factory import current_spelling


@dataclass
class RunOutcome:
    """Counts of one execution pass (``interrupted``: stopped by Ctrl-C)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)
    kept: int = 0  # re-scoring: stored values kept because the new result did not run


def open_context(config: RunConfig, store: RunStore, console: Console | None = None) -> RunContext:
    """Resolve the suite and its protocol and build the run context."""

    suite = resolve_suite(config.suite, run_dir=store.run_dir)  # the run's copy if moved
    protocol_cls = PROTOCOLS.lookup(suite.protocol)
    return RunContext(
        config=config,
        store=store,
        seed=config.seed,
        console=console or Console(stderr=True),
        suite=suite,
        protocol=protocol_cls(),
    )


class Keyed(Protocol):
    """What ``execute_units`` runs: a work unit or a comparison."""

    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)
T = TypeVar("T")
R = TypeVar("R")  # what a unit's ``work`` returns (its ``finish`` stage's input)
S = TypeVar("S")  # what a pass's session yields


def first_items(units: list[WorkUnit], limit: int | None) -> list[WorkUnit]:
    """The units of the first ``limit`` distinct item ids, in plan order (all when None)."""
    if limit is None:
        return list(units)
    keep: set[str] = set()
    for unit in units:
        if unit.item_id not in keep:
            if len(keep) >= limit:
                continue
            keep.add(unit.item_id)
    return [u for u in units if u.item_id in keep]


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def execute_units(
    ctx: RunContext,
    units: list[K],
    work: Callable[[K], R] | Callable[[K], Awaitable[R]],
    on_error: Callable[[K, Exception], str],
    description: str,
    finish: Callable[[K, R], Awaitable[None]] | None = None,
    ahead: int = 0,
    session: Callable[[], AbstractAsyncContextManager[S]] | None = None,
) -> RunOutcome:
    """Run ``work`` on every unit, ``config.concurrency`` at a time, with a progress bar.

    With ``finish``, a unit has two stages: ``work`` (talking to the system under test)
    holds one of the ``concurrency`` slots; ``finish(unit, what work returned)`` (scoring,
    storing) then runs as its own task while the slot goes to the next unit, so the system
    is never idle while its last reply is scored. At most ``concurrency`` units are in
    ``finish`` at once (a worker waits for room before it takes the next unit), and a unit
    counts as done only when its ``finish`` has returned.

    With ``ahead`` > 0, ``concurrency + ahead`` workers take units, and ``concurrency``
    limits only the units waiting on their system: ``work`` must hold one of
    ``ctx.system_call_slots`` (set here for the pass) around that wait. A unit then gets
    ready (reads its input) before a slot is free, and stores its reply after giving the
    slot back, so the system is not idle between one unit's reply and the next request.

    The units run as tasks of one asyncio event loop (see ``unit_loop``): an ``async``
    ``work`` waits on remote endpoints without holding a thread; a plain ``work`` runs in
    the loop's worker threads (``config.concurrency`` of them). An exception from ``work``
    is handed to ``on_error`` (which records it) and the run goes on. Ctrl-C (or a unit
    raising KeyboardInterrupt) stops cleanly: units not yet started are dropped, units in
    flight are allowed to finish, and KeyboardInterrupt is re-raised; a second Ctrl-C
    aborts at once.

    ``session()``, when given, is entered on the pass's event loop before the first unit
    starts and left after the last one ends (e.g. connections every unit uses).
    """
    outcome = RunOutcome(total=len(units))
    if not units:
        return outcome
    with _progress(ctx.console) as progress:
        task = progress.add_task(description, total=len(units), failed=0)
        drive = _UnitDriver(
            ctx,
            units,
            work,
            on_error,
            outcome,
            lambda: progress.update(task, advance=1, failed=outcome.failed),
            finish,
            ahead,
            session,
        )
        unit_loop(drive.run(), workers=ctx.config.concurrency + ahead, on_interrupt=drive.interrupt)
    if drive.interrupted is not None:
        raise drive.interrupted
    return outcome


class _UnitDriver(Generic[K, R, S]):
    """The tasks of one ``execute_units`` pass: ``concurrency`` workers draining the units."""

    def __init__(
        self,
        ctx: RunContext,
        units: list[K],
        work: Callable[[K], R] | Callable[[K], Awaitable[R]],
        on_error: Callable[[K, Exception], str],
        outcome: RunOutcome,
        advance: Callable[[], None],
        finish: Callable[[K, R], Awaitable[None]] | None = None,
        ahead: int = 0,
        session: Callable[[], AbstractAsyncContextManager[S]] | None = None,
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.finish = finish
        self.ahead = max(0, ahead)
        self.finishing: set[asyncio.Task[None]] = set()
        self.queue = iter(units)
        self.work = work
        self.is_async = inspect.iscoroutinefunction(work)
        self.on_error = on_error
        self.outcome = outcome
        self.advance = advance
        self.stopping = False
        self.interrupted: BaseException | None = None

    def interrupt(self, exc: BaseException) -> None:
        """Stop starting units (first Ctrl-C, or a unit raised KeyboardInterrupt)."""
        if self.interrupted is None:
            self.interrupted = exc
            self.outcome.interrupted = True
            self.ctx.console.print(
                "[yellow]interrupted: finishing the units in flight "
                "(Ctrl-C again to abort at once); run again to resume[/]"
            )
        self.stopping = True

    async def run(self) -> None:
        if self.session is None:
            await self._run_units()
            return
        async with self.session():
            await self._run_units()

    async def _run_units(self) -> None:
        concurrency = max(1, self.ctx.config.concurrency)
        self.room = asyncio.Semaphore(concurrency)  # units in their finish stage
        if self.ahead:
            self.ctx.system_call_slots = SystemCallSlots(concurrency)
        try:
            await asyncio.gather(*(self._worker() for _ in range(concurrency + self.ahead)))
            while self.finishing:  # the last units' finish stages (also after an interrupt)
                await asyncio.gather(*self.finishing)
        finally:
            self.ctx.system_call_slots = None
        self.outcome.skipped += sum(1 for _ in self.queue)  # never started (interrupted)

    async def _worker(self) -> None:
        while not self.stopping:  # an interrupt sets it
            unit = next(self.queue, None)
            if unit is None:
                return
            ok, result = await self._work(unit)
            if not ok:
                continue
            if self.finish is None:
                self._count_done()
                continue
            # room for this unit's finish stage: when ``concurrency`` units are being scored,
            # the worker waits here before it takes the next unit (scoring keeps up)
            await self.room.acquire()
            # ``result`` is what ``work`` returned (ok): None only when work returns None
            finishing = asyncio.create_task(self._finish_stage(unit, cast(R, result)))
            self.finishing.add(finishing)
            finishing.add_done_callback(self.finishing.discard)

    async def _finish_stage(self, unit: K, result: R) -> None:
        try:
            ok, _ = await self._finish(unit, result)
            if ok:
                self._count_done()
        finally:
            self.room.release()

    def _count_done(self) -> None:
        self.outcome.done += 1
        self.advance()

    async def _work(self, unit: K) -> tuple[bool, R | None]:
        """Run ``work`` on ``unit``: (True, what it returned), or (False, None) when it
        failed (recorded) or was interrupted."""
        if self.is_async:
            return await self._stage(unit, cast(Callable[[K], Awaitable[R]], self.work))
        work = cast(Callable[[K], R], self.work)
        return await self._stage(unit, lambda u: run_blocking(work, u))

    async def _finish(self, unit: K, result: R) -> tuple[bool, None]:
        """Run ``finish`` on ``unit`` and what its ``work`` returned."""
        finish = self.finish
        assert finish is not None
        return await self._stage(unit, lambda u: finish(u, result))

    async def _stage(self, unit: K, step: Callable[[K], Awaitable[T]]) -> tuple[bool, T | None]:
        """Run ``step`` on ``unit``: (True, what it returned), or (False, None) when it
        failed (recorded) or was interrupted."""
        try:
            result = await step(unit)
        except Exception as exc:
            message = await asyncio.to_thread(self.on_error, unit, exc)
            self.outcome.failed += 1
            self.outcome.errors.append(f"{unit.key}: {message}")
            self.advance()
            return False, None
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # KeyboardInterrupt / SystemExit raised by a unit
            self.interrupt(exc)
            self.advance()
            return False, None
        return True, result


# Fields that only change how a run executes, not its results.
_EXECUTION_FIELDS = {"concurrency", "limit", "cache_dir", "executor", "processes", "ray"}


def changed_fields(stored: JSONReadObject | None, config: RunConfig) -> list[str]:
    """Top-level config fields that differ from the stored run's (execution knobs ignored)."""
    if stored is None:
        return []
    current = scrub(config.model_dump(mode="json"))  # compared as stored: secrets redacted
    keys = (set(stored) | set(current)) - _EXECUTION_FIELDS
    return sorted(k for k in keys if stored.get(k) != current.get(k))


def _print_failures(ctx: RunContext, outcome: RunOutcome, what: str) -> None:
    if not outcome.failed:
        return
    ctx.console.print(f"[red]{outcome.failed} {what} failed[/]; first errors:")
    for line in outcome.errors[:5]:
        ctx.console.print(f"  {line}", highlight=False, markup=False)


def _unit_of(record: UnitRecord) -> WorkUnit:
    return WorkUnit(record.item_id, record.system, record.trial, record.condition, record.category)


def rescore_units(ctx: RunContext, metrics: list[str] | None, *, only_pending: bool) -> RunOutcome:
    """Score done units again from their stored artifacts (the system is never called).

    ``only_pending``: just the pending metrics of the units that have some (``voxeval run``
    on an existing folder). Otherwise every done unit gets ``metrics`` (None = the protocol's
    defaults) plus its own pending ones (``voxeval score``). A stored value that ran is never
    replaced by a pending or not-run result; ``outcome.kept`` counts those kept."""
    store = ctx.store
    pending = store.scores.pending_metrics()
    units = [_unit_of(r) for r in store.units.records(status="done")]
    if only_pending:
        units = [u for u in units if u.key in pending]
        if not units:
            return RunOutcome()
        ctx.console.print(
            f"retrying {sum(len(pending[u.key]) for u in units)} pending scores of "
            f"{len(units)} units (the systems are not called again)"
        )
    kept: list[str] = []
    lock = threading.Lock()

    def work(unit: WorkUnit) -> None:
        if only_pending:
            scores = ctx.require_protocol().score(unit, ctx, pending[unit.key])
        else:
            scores = ctx.require_protocol().score(unit, ctx, metrics)
            extra = [m for m in pending.get(unit.key, []) if m not in scores]
            if extra:
                scores.update(ctx.require_protocol().score(unit, ctx, extra))
        kept_here = store.scores.save(unit, scores)
        with lock:
            kept.extend(f"{unit.key} {m}" for m in kept_here)

    def on_error(unit: WorkUnit, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"

    outcome = execute_units(ctx, units, work, on_error, "re-scoring")
    _print_failures(ctx, outcome, "re-scorings")
    outcome.kept = len(kept)
    if kept:
        warn_with_examples(
            ctx,
            f"kept {len(kept)} stored scores",
            "that the re-score could not reproduce (it was pending or not run)",
            kept,
        )
    return outcome


def run_evaluation(
    config: RunConfig,
    out_dir: Path | str,
    *,
    limit: int | None = None,
    resume: bool = True,
    console: Console | None = None,
    index_url: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> Path:
    """Evaluate every system of ``config`` on its suite into ``out_dir``; returns the run folder.

    ``resume`` (default) skips units already done, retries failed and unfinished ones (from
    an emptied unit folder) and the pending scores of done units (without calling their
    systems); temporary files of processes killed mid-write are deleted. ``resume=False``
    wipes the folder's previous results first. ``limit`` keeps the first N item ids. Faults
    on our side are retried per ``retry``; a system's fault is scored as a failure (see
    ``voxeval.scoring.system_fault``). After the units, the protocol's comparison steps run
    (those not done yet; see ``voxeval.runner.comparison_steps``). ``run_health`` tells
    whether everything was scored and compared.
    """
    # planning and the report too, not only the unit pass; the run's context lets go of its
    # models when the run ends (``RunContext.close``)
    with collector_tuned(), ExitStack() as run_scope:
        return _run_evaluation(
            config, out_dir, limit, resume, console, index_url, retry, sleep, run_scope
        )


def _run_evaluation(
    config: RunConfig,
    out_dir: Path | str,
    limit: int | None,
    resume: bool,
    console: Console | None,
    index_url: str | None,
    retry: RetryPolicy,
    sleep: Callable[[float], None],
    run_scope: ExitStack,
) -> Path:
    register_config_secrets(config)  # redacted from everything the run writes or prints
    if config.executor == "processes":
        start_worker_server()  # meanwhile the plan is checked and the units planned
    validate_plan(config)  # every config mistake, before anything is written or called
    if not resume:
        refuse_to_reset_foreign_folder(Path(out_dir))
    store = RunStore(Path(out_dir), index_url=index_url)
    if not resume:
        store.reset()
    store.folder.remove_stale_temp_files()  # left by a process killed mid-write (kill -9)
    console = console or Console(stderr=True)
    changed = changed_fields(store.run_yaml.stored_config(), config)
    if changed and store.units.finished_keys():
        console.print(
            f"[yellow]warning:[/] resuming {store.run_dir} with a config that differs in "
            f"{', '.join(changed)}; finished units keep their old results (use --no-resume "
            "or another --out to start over)"
        )
        store.run_yaml.update_extra({"config_changed_on_resume": changed})
    limit = limit if limit is not None else config.limit
    store.run_yaml.write_provenance(config, extra={"limit": limit})
    ctx = run_scope.enter_context(open_context(config, store, console))
    if ctx.suite is not None:
        save_suite_copy(ctx.suite, store.run_dir)  # report/score work after the suite moved
    units = first_items(list(ctx.require_protocol().plan(ctx)), limit)
    store.units.record_items(units)
    done = store.units.finished_keys()
    todo = [u for u in units if u.key not in done]
    tried_before = {u.key for u in store.units.records() if u.status != "planned"} - done
    # killed while being scored: their stored interaction is scored, their systems not asked
    # again (not when the config changed: a unit's interaction is then redone)
    interacted = {} if changed else {u.key: u for u in store.units.records(status=INTERACTED)}
    # talking to their systems at a kill: what they had sent is in their folder's log
    cut_short = {u.key for u in store.units.records(status="running")}
    if len(todo) < len(units):
        ctx.console.print(f"resuming: {len(units) - len(todo)} of {len(units)} units already done")
        rescore_units(ctx, None, only_pending=True)  # earlier runs' pending scores

    def finish(unit: WorkUnit, fault: SystemFault | None) -> Future[None]:
        scores = ctx.require_protocol().score(unit, ctx, config.metrics)
        # done exactly when its scores are committed; a system fault is a scored result
        return store.units.complete_later(
            unit,
            scores,
            system_fault=fault.cause if fault else None,
            error=str(fault) if fault else None,
        )

    async def work(unit: WorkUnit) -> SystemFault | None:
        unit_dir = store.folder.unit_dir(unit)
        record = interacted.pop(unit.key, None)
        if record is not None:  # its reply and what it cost are stored: only scored again
            (unit_dir / SENT_LOG).unlink(missing_ok=True)  # (killed before it was deleted)
            return stored_fault(record)
        if unit.key in tried_before:
            if unit.key in cut_short:  # committed with this attempt's start
                lost = await asyncio.to_thread(logged_requests, unit_dir)
                record_lost_requests(store, unit, lost)
            # an interrupted or failed attempt's files go
            await asyncio.to_thread(store.folder.clear_unit_dir, unit)
        # the unit's slot is held, and its usage kept out of other commits, until its
        # interaction is marked together with that usage (see ``interaction_mark``)
        async with slots_held_until_marked():
            store.units.hold_usage(unit)
            marked = False
            try:
                with watch_requests(LoggedRequests(unit_dir, unit.system)):
                    fault = await interact_with_retries_async(ctx, unit, retry, sleep)
                mark = await asyncio.to_thread(
                    store.units.mark_interacted_later,
                    unit,
                    fault.cause if fault else None,
                    str(fault) if fault else None,
                )
                await await_future(mark)
                marked = True
                (unit_dir / SENT_LOG).unlink(missing_ok=True)  # counted by the usage rows
            finally:
                if not marked:  # failed on our side: its cost goes with its failure
                    store.units.release_usage(unit)
        return fault

    async def score_and_commit(unit: WorkUnit, fault: SystemFault | None) -> None:
        committed = await asyncio.to_thread(finish, unit, fault)  # scoring: CPU work
        # the commit is shared with the units finishing now; waiting for it holds no thread
        await await_future(committed)

    def on_error(unit: WorkUnit, exc: Exception) -> str:
        message = store.units.record_failure(unit, exc, cause=failure_cause(exc))
        # its requests are counted by the usage committed with the failure
        (store.folder.unit_dir(unit) / SENT_LOG).unlink(missing_ok=True)
        return message

    # ray, processes: workers interact and score; this process writes the index
    if config.executor == "ray":
        outcome = run_units_on_ray(ctx, todo, retry, execute_units)
    elif config.executor == "processes":
        outcome = run_units_in_processes(ctx, todo, retry, execute_units, tried_before)
    else:
        try:
            # the system's slot goes to the next unit while this one is scored and committed
            outcome = execute_units(
                ctx, todo, work, on_error, "evaluating", score_and_commit, units_ahead(ctx)
            )
        finally:
            store.flush()  # what interrupted units had queued (their start, their cost)
    _print_failures(ctx, outcome, "units")
    run_comparison_steps(ctx, execute_units, recompute=False)  # those not done yet
    write_report_for(ctx)
    return store.run_dir


def units_ahead(ctx: RunContext) -> int:
    """How many units beyond ``concurrency`` get ready (read their input) while every slot
    is busy: a quarter more, enough that one is ready whenever a reply frees a slot (getting
    ready takes milliseconds; a reply hundreds). 0 when the protocol does not wait on its
    systems inside ``ctx.system_call_slots``."""
    if not ctx.require_protocol().uses_system_call_slots:
        return 0
    return math.ceil(ctx.config.concurrency / 4)


def open_run(
    run_dir: Path | str | RunReader,
    console: Console | None = None,
    overrides: JSONObject | None = None,
) -> RunContext:
    """The context of an existing run folder (config from its run.yaml, read by
    ``RunReader``; ``overrides`` replace top-level fields, e.g. a new ``judge``)."""
    reader = run_dir if isinstance(run_dir, RunReader) else RunReader(run_dir)
    config = parse_run_config(reader.config_data(), str(reader.run_file))
    # a run written by voxeval 0.1 keeps that version's system spellings in its run.yaml
    config = config.model_copy(update={"systems": [current_spelling(s) for s in config.systems]})
    if overrides:
        merged = {**config.model_dump(mode="json"), **overrides}
        config = parse_run_config(merged, "score overrides")
    register_config_secrets(config)
    return open_context(config, reader.store, console)


def rescore(
    run_dir: Path | str,
    metrics: list[str] | None = None,
    *,
    console: Console | None = None,
    overrides: JSONObject | None = None,
) -> Path:
    """Score the finished units of a run again from their stored artifacts (the system is
    never called); new values replace old ones metric by metric. Rewrites the report.

    ``overrides`` replace top-level config fields for this scoring (e.g. ``{"judge": {...}}``
    to grade with a new judge); they are recorded in run.yaml (secrets scrubbed). Pending
    scores of every unit are retried too; a stored value that ran is never replaced by a
    pending or not-run result. The protocol's comparison steps are recomputed from the new
    scores (a stored comparison that was done is never replaced by one that is not)."""
    return rescore_run(run_dir, metrics, console=console, overrides=overrides)[0]


def rescore_run(
    run_dir: Path | str,
    metrics: list[str] | None = None,
    *,
    console: Console | None = None,
    overrides: JSONObject | None = None,
) -> tuple[Path, RunOutcome]:
    """``rescore``, also returning its outcome (``kept``: stored values and comparisons the
    re-score could not reproduce, ``failed``: units whose scoring raised)."""
    with open_run(run_dir, console, overrides) as ctx:  # its models go when it ends
        return _rescore_in(ctx, metrics, overrides)


def _rescore_in(
    ctx: RunContext, metrics: list[str] | None, overrides: JSONObject | None
) -> tuple[Path, RunOutcome]:
    store = ctx.store
    validate_scoring(ctx.config, ctx.suite, metrics, where=str(store.run_file))
    outcome = rescore_units(ctx, metrics, only_pending=False)
    compared = run_comparison_steps(ctx, execute_units, recompute=True)  # inputs re-scored
    if compared is not None:
        outcome.kept += compared.kept
    extra = dict(store.run_yaml.data().get("extra") or {})
    history: list[dict[str, Any]] = list(extra.get("rescored") or [])
    entry: dict[str, Any] = {"at": now_iso(), "metrics": metrics, "units": outcome.total}
    if outcome.kept:
        entry["kept_stored_values"] = outcome.kept
    if compared is not None:
        entry["comparisons"] = compared.total
    if overrides:
        entry["overrides"] = overrides
        entry["failed"] = outcome.failed
    history.append(entry)
    store.run_yaml.update_extra({"rescored": history})
    write_report_for(ctx)
    return store.run_dir, outcome


def write_report_for(ctx: RunContext) -> Path:
    return write_report(ctx)
