"""``executor: processes``: a run's units spread over worker processes of this machine.

One Python process runs Python code on one core at a time. A run that keeps 64 remote
requests in flight spends several milliseconds of CPU per unit around each request (event
loop, HTTP, files, scoring), so it tops out near one core's worth of units per second. Here
worker processes (``process_worker``) each build the run's context once and run the units
they are sent, as the local executor would, their share of ``concurrency`` at a time talking
to their systems. This process stays the index's one writer: it commits a unit's start before
sending it, and its result (journal and scores) when it comes back, in commits shared with
the other units of the moment. Provider rate limits live here as well (one ``LimitHost`` per
provider), so they hold across workers.

A worker that dies is replaced; the units it had in flight run again from an emptied folder,
each attempt counted, up to ``processes.max_retries`` times, and then fail with cause
``worker``. Committed units are never sent again, on this run or on a resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import math
import multiprocessing
import os
import threading
from collections import Counter
from collections.abc import AsyncIterator
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from typing import Any

from voxeval.api.context import RunContext
from voxeval.api.protocol import EvaluationProtocol
from voxeval.config import RunConfig
from voxeval.errors import ConfigError
from voxeval.protocols.contract import WorkUnit
from voxeval.providers.runtime.async_dispatch import await_future
from voxeval.runner.faults import RetryPolicy
from voxeval.runner.process_link import Link, open_link
from voxeval.runner.process_worker import WorkerStart, worker_main
from voxeval.runner.shared_limits import LimitHost, LimitValues
from voxeval.runner.unit_executor import ExecuteUnits, OutcomeT
from voxeval.runner.unit_work import (
    UnitResult,
    commit_result_later,
    record_lost_requests,
    record_remote_failure,
    with_concurrency,
)
from voxeval.store import INDEX_URL_ENV

# A worker imports voxeval and builds the run's context (the suite; models load lazily).
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 30.0


def worker_processes_context() -> ForkServerContext | SpawnContext:
    """How worker processes start: from a fork server that imported the worker's code and
    the built-in components once (``worker_preload``: each worker then starts in
    milliseconds, not the seconds of a fresh interpreter), where the platform has one; else
    as fresh interpreters. Never a fork of this process: its threads (progress bar, commits)
    may hold locks a forked copy would never see released."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["voxeval.runner.worker_preload"])
        return context
    return multiprocessing.get_context("spawn")


def start_worker_server() -> None:
    """Start the fork server in the background now (it imports voxeval: about 3 s of CPU),
    so it is ready by the time the run has planned its units; a no-op where workers start
    as fresh interpreters, or when it already runs."""
    if worker_processes_context().get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    threading.Thread(
        target=forkserver.ensure_running, name="voxeval-fork-server", daemon=True
    ).start()


class WorkerDied(Exception):
    """The worker process running a unit ended before it sent the unit's result;
    ``lost_requests``: what the unit's attempt had sent by then, per usage component."""

    def __init__(self, message: str, lost_requests: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.lost_requests = lost_requests or {}


@dataclasses.dataclass(frozen=True)
class ProcessShape:
    slots: tuple[int, ...]  # per worker: units talking to their systems at once
    holds_slot_throughout: bool  # the protocol's units keep their slot until scored

    @property
    def workers(self) -> int:
        return len(self.slots)

    def capacity(self, slots: int) -> int:
        """Units a worker with ``slots`` is given at once: for a protocol that waits on its
        systems inside the slots (single-turn), as many again being scored and a quarter
        more getting ready, as the local executor; else just the slots."""
        if self.holds_slot_throughout:
            return slots
        return 2 * slots + math.ceil(slots / 4)

    @property
    def in_flight(self) -> int:
        return sum(self.capacity(n) for n in self.slots)


def driver_environment() -> dict[str, str]:
    """The environment workers run with: the driver's own (same machine, same user), except
    the index URL (workers never open the index, and it may hold the database password).
    Sent with every worker rather than inherited: the fork server keeps the environment of the
    moment it started."""
    return {k: v for k, v in os.environ.items() if k != INDEX_URL_ENV}


def process_shape(config: RunConfig, protocol: EvaluationProtocol, n_units: int) -> ProcessShape:
    """Workers = ``processes.workers`` or one per CPU, at most one per unit and one per slot
    of ``concurrency``, which is split between them (they differ by one at most)."""
    workers = config.processes.workers or os.cpu_count() or 1
    workers = max(1, min(workers, n_units, config.concurrency))
    base, extra = divmod(config.concurrency, workers)
    slots = tuple(base + (1 if i < extra else 0) for i in range(workers))
    return ProcessShape(slots=slots, holds_slot_throughout=not protocol.uses_system_call_slots)


@dataclasses.dataclass
class WorkerProcess:
    """One worker: its process, its connection, the units it has and the slots it leased."""

    name: str
    process: Any  # a Process of ``worker_processes_context()``
    conn: Connection | None  # until the link takes it over
    slots: int = 1  # units it has talking to their systems at once
    capacity: int = 1  # units it is given at once
    link: Link | None = None
    pending: dict[str, asyncio.Future[UnitResult]] = dataclasses.field(default_factory=dict)
    leased: dict[str, int] = dataclasses.field(default_factory=dict)  # slots not given back
    # per unit in flight: requests reported sent, per usage component (the unit's journal
    # counts them once it comes back; only a dead worker's are recorded from here)
    sent: dict[str, Counter[str]] = dataclasses.field(default_factory=dict)
    alive: bool = True


def await_ready(worker: WorkerProcess, timeout_s: float = READY_TIMEOUT_S) -> WorkerProcess:
    """Wait for the worker's ``ready`` (its context is built); a ConfigError if it died
    or stayed silent (what went wrong is on its stderr, above)."""
    assert worker.conn is not None
    try:
        if worker.conn.poll(timeout_s):
            message = worker.conn.recv()
            if isinstance(message, tuple) and message[:1] == ("ready",):
                return worker
    except (EOFError, OSError):
        pass
    worker.process.join(timeout=5)
    code = worker.process.exitcode
    worker.process.kill()
    raise ConfigError(
        f"processes: {worker.name} could not start (exit code {code}; its error is printed above)"
        if code is not None
        else f"processes: {worker.name} was not ready within {timeout_s:g} s"
    )


class ProcessPool:
    """Worker processes, their connections and the run's shared provider limits."""

    def __init__(self, ctx: RunContext, shape: ProcessShape, retry: RetryPolicy) -> None:
        self.shape = shape
        self._mp = worker_processes_context()
        config = ctx.config
        config_data = config.model_dump(mode="json")
        self._start = WorkerStart(
            name="",
            config_data=config_data,
            source=config.source,
            run_dir=str(ctx.store.run_dir),
            env=driver_environment(),
            retry=retry,
            slots=1,
            lease_batch=config.processes.lease_batch,
        )
        self._serial = itertools.count()
        self.hosts: dict[str, LimitHost] = {}
        self.workers: list[WorkerProcess] = []
        self._closing = False
        self._broken: Exception | None = None
        self._listening: set[asyncio.Task[None]] = set()
        self._changed: asyncio.Event | None = None
        try:
            starting = [self._launch(slots) for slots in shape.slots]
            self.workers = [await_ready(worker) for worker in starting]
        except BaseException:
            self.kill()
            raise

    # -- processes ------------------------------------------------------------------------

    def _launch(self, slots: int) -> WorkerProcess:
        name = f"worker-{next(self._serial)}"
        parent, child = self._mp.Pipe(duplex=True)
        start = dataclasses.replace(self._start, name=name, slots=slots)
        process = self._mp.Process(
            target=worker_main, args=(child, start), name=f"voxeval {name}", daemon=True
        )
        process.start()
        child.close()
        return WorkerProcess(name, process, parent, slots, self.shape.capacity(slots))

    def kill(self) -> None:
        """End every worker at once (the pool could not start, or the run is aborting)."""
        for worker in self.workers:
            if worker.process.is_alive():
                worker.process.kill()
            worker.process.join(timeout=5)

    # -- the pass's event loop ------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ProcessPool]:
        """Connected on the running loop for one pass; stops the workers when it ends."""
        self._changed = asyncio.Event()
        for worker in self.workers:
            await self._connect(worker)
        try:
            yield self
        finally:
            await self._stop()

    async def _connect(self, worker: WorkerProcess) -> None:
        assert worker.conn is not None
        worker.link = await open_link(worker.conn)
        worker.conn = None
        listening = asyncio.create_task(self._listen(worker))
        self._listening.add(listening)
        listening.add_done_callback(self._listening.discard)

    async def _stop(self) -> None:
        self._closing = True
        for worker in self.workers:
            if worker.alive and worker.link is not None:
                worker.link.send(("stop",))
                await worker.link.drain_and_close()
        for worker in self.workers:
            await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
            if worker.process.is_alive():
                worker.process.kill()
                await asyncio.to_thread(worker.process.join, 5)
        for listening in list(self._listening):
            listening.cancel()
        await asyncio.gather(*self._listening, return_exceptions=True)

    async def run(self, unit: WorkUnit, clear: bool) -> UnitResult:
        """Send ``unit`` to the worker with the most room; its result (or ``WorkerDied``)."""
        worker = await self._worker_with_room()
        assert worker.link is not None
        result: asyncio.Future[UnitResult] = asyncio.get_running_loop().create_future()
        worker.pending[unit.key] = result
        worker.link.send(("unit", unit, clear))
        return await result

    async def _worker_with_room(self) -> WorkerProcess:
        assert self._changed is not None
        while True:
            alive = [w for w in self.workers if w.alive]
            if not alive and self._broken is not None:
                raise WorkerDied(f"no worker process is left ({self._broken})")
            if alive:
                best = max(alive, key=lambda w: w.capacity - len(w.pending))
                if len(best.pending) < best.capacity:
                    return best
            self._changed.clear()
            await self._changed.wait()

    async def _listen(self, worker: WorkerProcess) -> None:
        """Handle the worker's messages until its connection ends (or a message cannot be
        handled: the worker is then ended and replaced like a dead one)."""
        try:
            await self._handle_messages(worker)
        finally:
            await self._lost(worker)

    async def _handle_messages(self, worker: WorkerProcess) -> None:
        assert worker.link is not None and self._changed is not None
        while True:
            message = await worker.link.receive()
            if message is None:
                return
            kind = message[0]
            if kind == "sent":
                _, key, component, requests = message
                worker.sent.setdefault(key, Counter())[component] += requests
            elif kind == "result":
                worker.sent.pop(message[1], None)  # its journal has them
                waiting = worker.pending.pop(message[1], None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(message[2])
                self._changed.set()
            elif kind == "lease":
                _, request_id, key, limits, want, tokens_each = message
                granted = self._host(key, limits).state.lease(want, tokens_each)
                if granted > 0:  # the common case, answered at once
                    self._granted(worker, request_id, key, granted)
                    continue
                lease = self._lease(worker, request_id, key, want, tokens_each)
                leasing = asyncio.create_task(lease)  # waits at the host for a slot
                self._listening.add(leasing)
                leasing.add_done_callback(self._listening.discard)
            elif kind == "give_back":
                _, key, finished, unused, correction = message
                worker.leased[key] = worker.leased.get(key, 0) - finished - unused
                await self._host(key).give_back(finished, unused, correction)
            elif kind == "penalise":
                await self._host(message[1]).penalise(message[2])
            elif kind == "stats":
                worker.link.send(("answer", message[1], await self._host(message[2]).stats()))
            else:
                raise ValueError(f"{worker.name}: unknown message {kind!r}")

    def _host(self, key: str, limits: LimitValues | None = None) -> LimitHost:
        host = self.hosts.get(key)
        if host is None:
            host = self.hosts[key] = LimitHost(dataclasses.asdict(limits or LimitValues()))
        return host

    async def _lease(
        self, worker: WorkerProcess, request_id: int, key: str, want: int, tokens_each: int
    ) -> None:
        self._granted(worker, request_id, key, await self._host(key).lease(want, tokens_each))

    @staticmethod
    def _granted(worker: WorkerProcess, request_id: int, key: str, granted: int) -> None:
        worker.leased[key] = worker.leased.get(key, 0) + granted
        assert worker.link is not None
        worker.link.send(("answer", request_id, granted))

    async def _lost(self, worker: WorkerProcess) -> None:
        """The worker's connection ended: give back its slots, fail its units in flight and,
        mid-run, start another worker in its place."""
        worker.alive = False
        for key, held in worker.leased.items():
            if held > 0:  # its requests are over, one way or another
                await self._host(key).give_back(held, 0, 0)
        worker.leased.clear()
        if self._closing:
            return
        if worker.process.is_alive():  # its connection failed, not the process
            worker.process.kill()
        await asyncio.to_thread(worker.process.join, 5)
        message = (
            f"{worker.name} (pid {worker.process.pid}) ended with exit code "
            f"{worker.process.exitcode} before sending the unit's result"
        )
        pending, worker.pending = worker.pending, {}
        sent, worker.sent = worker.sent, {}
        for key, waiting in pending.items():
            if not waiting.done():
                waiting.set_exception(WorkerDied(message, dict(sent.get(key, {}))))
        try:
            fresh = await asyncio.to_thread(lambda: await_ready(self._launch(worker.slots)))
        except ConfigError as exc:
            self._broken = exc
        else:
            await self._connect(fresh)  # connected before any unit can pick it
            self.workers.append(fresh)
        assert self._changed is not None
        self._changed.set()


def run_units_in_processes(
    ctx: RunContext,
    units: list[WorkUnit],
    retry: RetryPolicy,
    execute_units: ExecuteUnits[OutcomeT],
    tried_before: set[str],
) -> OutcomeT:
    """Run ``units`` on worker processes; this process writes every result to the index as
    it comes back. ``execute_units`` is the runner's (progress, Ctrl-C, error accounting);
    ``tried_before``: keys of units an earlier attempt left files for. Returns its
    ``RunOutcome``."""
    store = ctx.store
    if not units:
        return execute_units(ctx, units, lambda u: None, lambda u, e: "", "evaluating")
    protocol = ctx.require_protocol()
    shape = process_shape(ctx.config, protocol, len(units))
    ctx.console.print(
        f"processes: {shape.workers} workers, with {'/'.join(map(str, shape.slots))} units "
        f"talking to their systems ({protocol.name})"
    )
    pool = ProcessPool(ctx, shape, retry)
    max_retries = ctx.config.processes.max_retries

    async def work(unit: WorkUnit) -> None:
        for attempt in range(max_retries + 1):
            await ctx.commit_start(unit)  # a driver killed now leaves it 'running'
            try:
                result = await pool.run(unit, clear=attempt > 0 or unit.key in tried_before)
            except WorkerDied as died:
                if died.lost_requests:  # sent by the dead attempt: they count
                    await asyncio.to_thread(record_lost_requests, store, unit, died.lost_requests)
                if attempt == max_retries:
                    raise
                continue
            committed = await asyncio.to_thread(commit_result_later, store, unit, result)
            await await_future(committed)
            return

    def on_error(unit: WorkUnit, exc: Exception) -> str:
        return record_remote_failure(store, unit, exc, died=isinstance(exc, WorkerDied))

    try:
        return execute_units(
            with_concurrency(ctx, shape.in_flight),
            units,
            work,
            on_error,
            f"evaluating ({shape.workers} processes)",
            session=pool.running,
        )
    finally:
        pool.kill()  # after a clean stop, nothing is left to kill
