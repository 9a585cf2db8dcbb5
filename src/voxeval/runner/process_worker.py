"""A worker process of ``executor: processes``.

The worker builds the run's context once (over a ``journal_store``: artifacts go to the run
folder, index writes into a journal) and then runs every unit the driver sends it as an
asyncio task, exactly as the local executor runs a unit: the interaction (network waits hold
no thread; at most ``slots`` units talk to their systems at once), then scoring in a CPU
thread. The unit's scores and journal go back to the driver, which commits them.

Provider rate limits are the driver's: every ``limiter_for`` in a worker returns a
``LeasedRateLimiter`` whose leases travel over the same connection (``DriverLeaseChannel``).

Once its context is built, the worker says ``("ready", pid)`` through the pipe itself; then
messages (``process_link``), driver to worker: ``("unit", unit, clear)`` (``clear``: empty
the unit's folder first, an earlier attempt left files), ``("answer", request_id, value)``,
``("stop",)``. Worker to driver: ``("result", key, UnitResult)``,
``("sent", key, component, requests)`` (a unit's request, reported as it is sent),
``("lease", request_id, key, limits, want, tokens_each)``, ``("give_back", key, finished,
unused, token_correction)``, ``("penalise", key, retry_after_s)``, ``("stats", request_id,
key)``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from rich.console import Console

from voxeval import registry
from voxeval.api.context import RunContext
from voxeval.config import parse_run_config
from voxeval.protocols.contract import WorkUnit
from voxeval.providers.http.openai_http import RequestCounts, watch_requests
from voxeval.providers.usage.rate_limits import ProviderLimits, set_limiter_factory
from voxeval.providers.usage.usage_ledger import current_component
from voxeval.redaction import register_config_secrets
from voxeval.runner.event_loop import unit_loop
from voxeval.runner.faults import RetryPolicy, interact_with_retries_async
from voxeval.runner.process_link import Link, open_link
from voxeval.runner.sent_log import usage_component
from voxeval.runner.shared_limits import LeasedRateLimiter, LimitValues
from voxeval.runner.unit_work import (
    UnitResult,
    failed_result,
    journal_of,
    scored_result,
    worker_context,
)


@dataclass(frozen=True)
class WorkerStart:
    """What a worker process is started with."""

    config_data: dict[str, Any]
    source: str | None
    run_dir: str
    env: dict[str, str]  # the whole environment the worker runs with
    retry: RetryPolicy
    slots: int  # units talking to their systems at once
    lease_batch: int
    name: str


class DriverRequests:
    """Requests to the driver that wait for an answer, by id (any thread may ask)."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._waiting: dict[int, Future[Any]] = {}

    def ask(self, *message: Any) -> tuple[int, Future[Any]]:
        """Send ``(kind, request_id, *rest)``; the future gets the answer."""
        answer: Future[Any] = Future()
        with self._lock:
            request_id = next(self._ids)
            self._waiting[request_id] = answer
        kind, *rest = message
        self.link.send_threadsafe((kind, request_id, *rest))
        return request_id, answer

    def ask_and_wait(self, *message: Any, timeout_s: float | None = None) -> Any:
        """``ask``, then block this thread until the answer comes. Refused on the loop's own
        thread, which is the one that would have to read the answer."""
        if self.link.on_loop_thread():
            raise RuntimeError(
                "a blocking request to the driver on the worker's event loop would never be "
                "answered; call it from a thread (asyncio.to_thread)"
            )
        return self.ask(*message)[1].result(timeout=timeout_s)

    def answered(self, request_id: int, value: Any) -> None:
        with self._lock:
            answer = self._waiting.pop(request_id, None)
        if answer is not None and not answer.done():
            answer.set_result(value)

    def abandon_all(self) -> None:
        """The driver is gone: nobody will answer."""
        with self._lock:
            waiting, self._waiting = list(self._waiting.values()), {}
        for answer in waiting:
            if not answer.done():
                answer.set_exception(ConnectionError("the driver closed the connection"))


class DriverLeaseChannel:
    """A ``LeaseChannel`` to the driver's host of one provider's limits."""

    def __init__(self, requests: DriverRequests, key: str, limits: LimitValues) -> None:
        self._requests = requests
        self._key = key
        self._limits = limits

    def _ask_lease(self, want: int, tokens_each: int) -> Future[Any]:
        return self._requests.ask("lease", self._key, self._limits, want, tokens_each)[1]

    async def lease(self, want: int, tokens_each: int) -> int:
        answer = self._ask_lease(want, tokens_each)
        try:
            return int(await asyncio.wrap_future(answer))
        except asyncio.CancelledError:
            # a caller given up before the answer must not keep the slots it brings
            answer.add_done_callback(self._give_back_unused)
            raise

    def _give_back_unused(self, answer: Future[Any]) -> None:
        if not answer.cancelled() and answer.exception() is None and int(answer.result()) > 0:
            self.give_back(0, int(answer.result()), 0)

    def lease_blocking(self, want: int, tokens_each: int) -> int:
        lease = ("lease", self._key, self._limits, want, tokens_each)
        return int(self._requests.ask_and_wait(*lease))

    def give_back(self, finished: int, unused: int, token_correction: int) -> None:
        self._requests.link.send_threadsafe(
            ("give_back", self._key, finished, unused, token_correction)
        )

    def penalise(self, retry_after_s: float | None) -> None:
        self._requests.link.send_threadsafe(("penalise", self._key, retry_after_s))

    def stats(self) -> dict[str, float]:
        return dict(self._requests.ask_and_wait("stats", self._key, timeout_s=10))


class SentRequests(RequestCounts):
    """A unit's request tally that tells the driver of each request as it is sent (one small
    message on the open connection, no index write): the journal reports the unit's usage
    only when it finishes, and if this process is killed first the driver still knows what
    its unit in flight had sent."""

    def __init__(self, link: Link, unit: WorkUnit) -> None:
        super().__init__()
        self._link = link
        self._key = unit.key
        self._system = unit.system

    def add(self, **amounts: float) -> None:
        sent = int(amounts.get("requests", 0))
        if not sent:
            return
        message = ("sent", self._key, usage_component(current_component(), self._system), sent)
        if self._link.on_loop_thread():
            self._link.send(message)
        else:
            self._link.send_threadsafe(message)


def install_driver_limiters(requests: DriverRequests, batch: int) -> None:
    """Make ``limiter_for`` of this process hand out limiters held by the driver."""
    made: dict[str, LeasedRateLimiter] = {}
    lock = threading.Lock()

    def factory(key: str, limits: ProviderLimits) -> LeasedRateLimiter:
        with lock:
            if key not in made:
                channel = DriverLeaseChannel(requests, key, LimitValues.of(limits))
                made[key] = LeasedRateLimiter(channel, batch)
            return made[key]

    set_limiter_factory(factory)


def worker_main(conn: Connection, start: WorkerStart) -> None:
    """The worker process's entry point (``multiprocessing`` target)."""
    os.environ.clear()
    os.environ.update(start.env)
    # Ctrl-C reaches the whole process group: the driver decides what stops (it stops
    # sending units); a second Ctrl-C still ends this process at once (``unit_loop``)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    config = parse_run_config(start.config_data, start.source or "<run config>")
    config._source = start.source
    register_config_secrets(config)
    ctx = worker_context(config, start.run_dir, Console(stderr=True))
    registry.load_all()  # (the fork server usually did it already, once for every worker)
    conn.send(("ready", os.getpid()))  # (multiprocessing's framing; the link takes over next)
    unit_loop(_serve(ctx, conn, start), workers=start.slots, on_interrupt=lambda exc: None)


async def _serve(ctx: RunContext, conn: Connection, start: WorkerStart) -> None:
    link = await open_link(conn)
    requests = DriverRequests(link)
    install_driver_limiters(requests, start.lease_batch)
    if ctx.require_protocol().uses_system_call_slots:
        ctx.system_call_slots = asyncio.Semaphore(start.slots)
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            message = await link.receive()
            if message is None or message[0] == "stop":
                break
            if message[0] == "unit":
                task = asyncio.create_task(_run_unit(ctx, link, start, message[1], message[2]))
                running.add(task)
                task.add_done_callback(running.discard)
            elif message[0] == "answer":
                requests.answered(message[1], message[2])
            else:
                raise ValueError(f"worker {start.name}: unknown message {message[0]!r}")
    finally:
        requests.abandon_all()
        for task in running:
            task.cancel()  # the driver is gone or done: nobody takes these results
        await asyncio.gather(*running, return_exceptions=True)
        await link.drain_and_close()


async def _run_unit(
    ctx: RunContext, link: Link, start: WorkerStart, unit: WorkUnit, clear: bool
) -> None:
    store = ctx.store
    journal_of(store)  # a worker's store: its index writes go to the journal
    result: UnitResult
    try:
        if clear:  # an interrupted or failed attempt's files go
            await asyncio.to_thread(store.folder.clear_unit_dir, unit)
        with watch_requests(SentRequests(link, unit)):  # (threads copy the context)
            fault = await interact_with_retries_async(ctx, unit, start.retry, time.sleep)
            scores = await asyncio.to_thread(
                ctx.require_protocol().score, unit, ctx, ctx.config.metrics
            )
        result = scored_result(store, unit, scores, fault, start.name)
    except asyncio.CancelledError:
        raise  # the worker is stopping: nobody takes this result
    except BaseException as exc:  # even a unit's SystemExit: the driver waits for a result
        result = await asyncio.to_thread(failed_result, store, unit, exc, start.name)
    link.send(("result", unit.key, result))
