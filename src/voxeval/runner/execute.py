"""Run a config end to end: plan, skip finished units, interact + score each unit as an
asyncio task (network waits hold no thread; CPU work runs in a bounded thread pool), record
every outcome, write the report. Also re-scoring of a finished run."""

from __future__ import annotations

import asyncio
import gc
import inspect
import math
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from voxeval.benchmarks.suite_info import resolve_suite, save_suite_copy
from voxeval.config import RunConfig, parse_run_config
from voxeval.errors import ConfigError, SystemFault
from voxeval.protocols.context import RunContext
from voxeval.protocols.contract import PROTOCOLS, WorkUnit
from voxeval.providers.async_dispatch import run_blocking, set_blocking_executor
from voxeval.providers.http_clients import close_async_clients
from voxeval.redaction import register_config_secrets, scrub
from voxeval.report.writer import write_report
from voxeval.runner.comparison_steps import run_comparison_steps
from voxeval.runner.faults import (
    DEFAULT_RETRY,
    RetryPolicy,
    failure_cause,
    interact_with_retries_async,
)
from voxeval.runner.plan_check import validate_plan, validate_scoring
from voxeval.runner.ray_executor import run_units_on_ray
from voxeval.store import RunStore
from voxeval.store.provenance import now_iso
from voxeval.store.run_store import refuse_to_reset_foreign_folder


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


# Threads for CPU work: more only contend for the GIL (sqlite, file I/O and the embedded
# models release it, so a few threads still overlap them).
CPU_THREADS = 4

# Allocations between two collections of the youngest generation during a pass (Python's
# default: 700). A young collection costs about the same whatever the threshold (it visits
# what the units in flight hold), so collecting 14 times less often cut the collector's time
# in a 1,024-unit `http` run at 64 from 150-200 ms to 83 ms (bench, gc.callbacks), at a pause
# of ~8 ms per collection. Cycles are still collected; only later.
YOUNG_COLLECTION_EVERY = 10_000

K = TypeVar("K", bound=Keyed)
T = TypeVar("T")


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
    work: Callable[[K], Any] | Callable[[K], Awaitable[Any]],
    on_error: Callable[[K, Exception], str],
    description: str,
    finish: Callable[[K, Any], Awaitable[None]] | None = None,
    ahead: int = 0,
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
        )
        unit_loop(drive.run(), workers=ctx.config.concurrency + ahead, on_interrupt=drive.interrupt)
    if drive.interrupted is not None:
        raise drive.interrupted
    return outcome


class _UnitDriver(Generic[K]):
    """The tasks of one ``execute_units`` pass: ``concurrency`` workers draining the units."""

    def __init__(
        self,
        ctx: RunContext,
        units: list[K],
        work: Callable[[K], Any],
        on_error: Callable[[K, Exception], str],
        outcome: RunOutcome,
        advance: Callable[[], None],
        finish: Callable[[K, Any], Awaitable[None]] | None = None,
        ahead: int = 0,
    ) -> None:
        self.ctx = ctx
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
        concurrency = max(1, self.ctx.config.concurrency)
        self.room = asyncio.Semaphore(concurrency)  # units in their finish stage
        if self.ahead:
            self.ctx.system_call_slots = asyncio.Semaphore(concurrency)
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
            ok, result = await self._stage(unit, False)
            if not ok:
                continue
            if self.finish is None:
                self._count_done()
                continue
            # room for this unit's finish stage: when ``concurrency`` units are being scored,
            # the worker waits here before it takes the next unit (scoring keeps up)
            await self.room.acquire()
            finishing = asyncio.create_task(self._finish_stage(unit, result))
            self.finishing.add(finishing)
            finishing.add_done_callback(self.finishing.discard)

    async def _finish_stage(self, unit: K, result: Any) -> None:
        try:
            ok, _ = await self._stage(unit, True, result)
            if ok:
                self._count_done()
        finally:
            self.room.release()

    def _count_done(self) -> None:
        self.outcome.done += 1
        self.advance()

    async def _stage(self, unit: K, finishing: bool, *args: Any) -> tuple[bool, Any]:
        """Run ``work`` (or ``finish``) on ``unit``: (True, what it returned), or (False,
        None) when it failed (recorded) or was interrupted."""
        try:
            if finishing:
                assert self.finish is not None
                await self.finish(unit, *args)
                result = None
            elif self.is_async:
                result = await self.work(unit)
            else:
                result = await run_blocking(self.work, unit)
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


def unit_loop(
    main: Coroutine[Any, Any, T],
    *,
    workers: int,
    on_interrupt: Callable[[BaseException], None] | None = None,
) -> T:
    """Run ``main`` on a fresh event loop with two thread pools: ``CPU_THREADS`` for short
    CPU work (``asyncio.to_thread``: scoring, file writes, embedded models) and ``workers``
    for blocking calls (``run_blocking``: protocols and systems without an async path). On the
    main thread, the first Ctrl-C calls ``on_interrupt`` (units in flight finish) and a second
    one exits at once.

    Called where an event loop already runs on this thread (a notebook, a test session that
    drives a browser through Playwright's sync API), the loop gets a thread of its own: a
    second loop cannot run on a thread that has one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _unit_loop_here(main, workers=workers, on_interrupt=on_interrupt)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(_unit_loop_here(main, workers=workers, on_interrupt=on_interrupt))
        except BaseException as exc:  # handed to the caller's thread below
            errors.append(exc)

    thread = threading.Thread(target=run, name="voxeval-units")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def _unit_loop_here(
    main: Coroutine[Any, Any, T],
    *,
    workers: int,
    on_interrupt: Callable[[BaseException], None] | None = None,
) -> T:
    async def wrapped() -> T:
        loop = asyncio.get_running_loop()
        presses = 0

        def on_sigint() -> None:
            nonlocal presses
            presses += 1
            if presses > 1 or on_interrupt is None:
                os._exit(130)  # second Ctrl-C: worker threads cannot be stopped otherwise
            on_interrupt(KeyboardInterrupt())

        # Event loops take signal handlers on POSIX, in the main thread only; elsewhere
        # (Windows, a loop on its own thread) Ctrl-C keeps Python's default, a
        # KeyboardInterrupt, without the graceful first press.
        handled = os.name == "posix" and threading.current_thread() is threading.main_thread()
        if handled:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await main
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGINT)
            await close_async_clients()

    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        cpu = ThreadPoolExecutor(
            max_workers=min(max(1, workers), CPU_THREADS), thread_name_prefix="cpu"
        )
        loop.set_default_executor(cpu)
        blocking = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="unit")
        set_blocking_executor(loop, blocking)
        try:
            with _collector_tuned_for_a_pass():
                return runner.run(wrapped())
        finally:
            blocking.shutdown(wait=True)


_passes_running = 0
_passes_lock = threading.Lock()
_saved_thresholds: tuple[int, ...] = ()


@contextmanager
def _collector_tuned_for_a_pass() -> Iterator[None]:
    """The garbage collector's settings for unit passes (shared by passes that overlap, e.g.
    on two threads: the first one in sets them, the last one out restores them).

    What is alive when a pass starts (modules, models, the plan) outlives it: frozen, it is
    left out of the collector's full passes, which otherwise stall the loop ~0.1 s each. Young
    objects are collected every ``YOUNG_COLLECTION_EVERY`` allocations."""
    global _passes_running, _saved_thresholds
    with _passes_lock:
        _passes_running += 1
        if _passes_running == 1:
            gc.freeze()
            _saved_thresholds = gc.get_threshold()
            gc.set_threshold(YOUNG_COLLECTION_EVERY, *_saved_thresholds[1:])
    try:
        yield
    finally:
        with _passes_lock:
            _passes_running -= 1
            if _passes_running == 0:
                gc.set_threshold(*_saved_thresholds)
                gc.unfreeze()


# Fields that only change how a run executes, not its results.
_EXECUTION_FIELDS = {"concurrency", "limit", "cache_dir", "executor", "ray"}


def changed_fields(stored: dict[str, Any] | None, config: RunConfig) -> list[str]:
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


def _unit_of(record: Any) -> WorkUnit:
    return WorkUnit(record.item_id, record.system, record.trial, record.condition, record.category)


def rescore_units(ctx: RunContext, metrics: list[str] | None, *, only_pending: bool) -> RunOutcome:
    """Score done units again from their stored artifacts (the system is never called).

    ``only_pending``: just the pending metrics of the units that have some (``voxeval run``
    on an existing folder). Otherwise every done unit gets ``metrics`` (None = the protocol's
    defaults) plus its own pending ones (``voxeval score``). A stored value that ran is never
    replaced by a pending or not-run result; ``outcome.kept`` counts those kept."""
    store = ctx.store
    pending = store.pending_metrics()
    units = [_unit_of(r) for r in store.units(status="done")]
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
        kept_here = store.save_scores(unit, scores)
        with lock:
            kept.extend(f"{unit.key} {m}" for m in kept_here)

    def on_error(unit: WorkUnit, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"

    outcome = execute_units(ctx, units, work, on_error, "re-scoring")
    _print_failures(ctx, outcome, "re-scorings")
    outcome.kept = len(kept)
    if kept:
        ctx.console.print(
            f"[yellow]kept {len(kept)} stored scores[/] that the re-score could not reproduce "
            "(it was pending or not run), e.g. " + escape("; ".join(kept[:3])),
            highlight=False,
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
    register_config_secrets(config)  # redacted from everything the run writes or prints
    validate_plan(config)  # every config mistake, before anything is written or called
    if not resume:
        refuse_to_reset_foreign_folder(Path(out_dir))
    store = RunStore(Path(out_dir), index_url=index_url)
    if not resume:
        store.reset()
    store.remove_stale_temp_files()  # left by a process killed mid-write (kill -9)
    console = console or Console(stderr=True)
    changed = changed_fields(store.stored_config(), config)
    if changed and store.finished_keys():
        console.print(
            f"[yellow]warning:[/] resuming {store.run_dir} with a config that differs in "
            f"{', '.join(changed)}; finished units keep their old results (use --no-resume "
            "or another --out to start over)"
        )
        store.update_extra({"config_changed_on_resume": changed})
    limit = limit if limit is not None else config.limit
    store.write_provenance(config, extra={"limit": limit})
    ctx = open_context(config, store, console)
    if ctx.suite is not None:
        save_suite_copy(ctx.suite, store.run_dir)  # report/score work after the suite moved
    units = first_items(list(ctx.require_protocol().plan(ctx)), limit)
    store.record_items(units)
    done = store.finished_keys()
    todo = [u for u in units if u.key not in done]
    tried_before = {u.key for u in store.units() if u.status != "planned"} - done
    if len(todo) < len(units):
        ctx.console.print(f"resuming: {len(units) - len(todo)} of {len(units)} units already done")
        rescore_units(ctx, None, only_pending=True)  # earlier runs' pending scores

    def finish(unit: WorkUnit, fault: SystemFault | None) -> Future[None]:
        scores = ctx.require_protocol().score(unit, ctx, config.metrics)
        # done exactly when its scores are committed; a system fault is a scored result
        return store.complete_later(
            unit,
            scores,
            system_fault=fault.cause if fault else None,
            error=str(fault) if fault else None,
        )

    async def work(unit: WorkUnit) -> SystemFault | None:
        if unit.key in tried_before:
            # an interrupted or failed attempt's files go
            await asyncio.to_thread(store.clear_unit_dir, unit)
        return await interact_with_retries_async(ctx, unit, retry, sleep)

    async def score_and_commit(unit: WorkUnit, fault: SystemFault | None) -> None:
        committed = await asyncio.to_thread(finish, unit, fault)  # scoring: CPU work
        # the commit is shared with the units finishing now; waiting for it holds no thread
        await asyncio.wrap_future(committed)

    def on_error(unit: WorkUnit, exc: Exception) -> str:
        return store.record_failure(unit, exc, cause=failure_cause(exc))

    if config.executor == "ray":  # workers interact and score; this process writes the index
        outcome = run_units_on_ray(ctx, todo, retry, execute_units)
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
    if not getattr(ctx.require_protocol(), "uses_system_call_slots", False):
        return 0
    return math.ceil(ctx.config.concurrency / 4)


def load_stored_config(store: RunStore) -> RunConfig:
    data = store.stored_config()
    if data is None:
        raise ConfigError(f"{store.run_file}: no 'config' recorded; is this a voxeval run folder?")
    return parse_run_config(data, str(store.run_file))


def open_run(
    run_dir: Path | str,
    console: Console | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunContext:
    """The context of an existing run folder (config from its run.yaml; ``overrides``
    replace top-level fields, e.g. a new ``judge``)."""
    path = Path(run_dir)
    if not (path / "run.yaml").exists():
        raise ConfigError(f"{path}: not a run folder (no run.yaml)")
    store = RunStore(path)
    config = load_stored_config(store)
    if overrides:
        merged = {**config.model_dump(mode="json"), **overrides}
        config = parse_run_config(merged, "score overrides")
    register_config_secrets(config)
    return open_context(config, store, console)


def rescore(
    run_dir: Path | str,
    metrics: list[str] | None = None,
    *,
    console: Console | None = None,
    overrides: dict[str, Any] | None = None,
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
    overrides: dict[str, Any] | None = None,
) -> tuple[Path, RunOutcome]:
    """``rescore``, also returning its outcome (``kept``: stored values and comparisons the
    re-score could not reproduce, ``failed``: units whose scoring raised)."""
    ctx = open_run(run_dir, console, overrides)
    store = ctx.store
    validate_scoring(ctx.config, ctx.suite, metrics, where=str(store.run_file))
    outcome = rescore_units(ctx, metrics, only_pending=False)
    compared = run_comparison_steps(ctx, execute_units, recompute=True)  # inputs re-scored
    if compared is not None:
        outcome.kept += compared.kept
    extra = dict(store.provenance.get("extra") or {})
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
    store.update_extra({"rescored": history})
    write_report_for(ctx)
    return store.run_dir, outcome


def write_report_for(ctx: RunContext) -> Path:
    return write_report(ctx)
