"""Faults during a unit's interaction: retries of our side's faults with back-off, and the
cause a failed unit is counted under."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.markup import escape

from voxeval.api.context import RunContext
from voxeval.errors import (
    ConfigError,
    HarnessFault,
    ProviderUnavailable,
    SystemFault,
    UnknownComponent,
    VoxevalError,
)
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.metric_runner import is_transient_fault


@dataclass(frozen=True)
class RetryPolicy:
    """How often a unit's interaction is tried when it fails on our side (a ``HarnessFault``:
    simulator, renderer, ...; or a remote provider still failing after its own retries), and
    the back-off between tries: ``backoff_s`` doubling up to ``max_backoff_s``."""

    attempts: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ConfigError("retries: need attempts >= 1 and non-negative back-off times")

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry + 1``."""
        return float(min(self.max_backoff_s, self.backoff_s * 2**retry))


DEFAULT_RETRY = RetryPolicy()


def failure_cause(exc: BaseException) -> str:
    """Why a unit failed on our side, as counted in the summary: the ``HarnessFault``'s
    component, ``endpoint`` for a remote provider, ``config`` for a setup problem (missing
    key, model, bad option), ``input`` for unusable input data (a missing replay reply, an
    unreadable file), else ``internal`` (a bug: the traceback is in error.txt)."""
    if isinstance(exc, HarnessFault):
        return exc.component
    if is_transient_fault(exc):
        return "endpoint"
    if isinstance(exc, ConfigError | ProviderUnavailable | UnknownComponent):
        return "config"
    if isinstance(exc, VoxevalError):
        return "input"
    return "internal"


def interact_with_retries(
    ctx: RunContext, unit: WorkUnit, retry: RetryPolicy, sleep: Callable[[float], None]
) -> SystemFault | None:
    """Interact with ``unit``'s system, retrying faults on our side with back-off. Returns
    the system's fault when it failed (recorded by the protocol, scored as a failure);
    a fault on our side that outlasts the retries is raised."""
    for attempt in range(retry.attempts):
        ctx.store.recorder.start(unit)
        try:
            ctx.require_protocol().interact(unit, ctx)
            return None
        except SystemFault as fault:
            return fault
        except Exception as exc:
            if not is_transient_fault(exc) or attempt + 1 >= retry.attempts:
                raise
            sleep(_announce_retry(ctx, unit, retry, attempt, exc))
    raise AssertionError("unreachable")  # the last attempt returns or raises


async def interact_with_retries_async(
    ctx: RunContext, unit: WorkUnit, retry: RetryPolicy, sleep: Callable[[float], None]
) -> SystemFault | None:
    """``interact_with_retries`` from an asyncio task: a protocol with ``interact_async``
    is awaited (its system's network waits hold no thread), any other runs in a worker
    thread. ``sleep`` is awaited as ``asyncio.sleep`` when it is ``time.sleep``."""
    protocol = ctx.require_protocol()
    for attempt in range(retry.attempts):
        try:
            # the protocol commits the unit's start itself (one using the system call slots
            # once it holds one, so a unit prepared ahead counts an attempt only when it
            # reaches its system)
            await protocol.interact_async(unit, ctx)
            return None
        except SystemFault as fault:
            return fault
        except Exception as exc:
            if not is_transient_fault(exc) or attempt + 1 >= retry.attempts:
                raise
            delay = _announce_retry(ctx, unit, retry, attempt, exc)
            if sleep is time.sleep:
                await asyncio.sleep(delay)
            else:
                sleep(delay)  # a test's recording sleep
    raise AssertionError("unreachable")  # the last attempt returns or raises


def _announce_retry(
    ctx: RunContext, unit: WorkUnit, retry: RetryPolicy, attempt: int, exc: Exception
) -> float:
    """Say on the console that ``unit`` is retried after ``exc``; the back-off to wait."""
    delay = retry.delay(attempt)
    detail = escape(
        f"{unit.key} in {delay:g} s (attempt {attempt + 2} of "
        f"{retry.attempts}): {type(exc).__name__}: {exc}"
    )
    ctx.console.print(f"[yellow]retrying[/] {detail}", highlight=False)
    return delay


def warn_with_examples(ctx: RunContext, headline: str, why: str, examples: Sequence[str]) -> None:
    """A yellow console warning: ``headline`` (a count), ``why``, and the first three of
    ``examples`` (escaped: unit keys and metric names are not markup)."""
    ctx.console.print(
        f"[yellow]{headline}[/] {why}, e.g. " + escape("; ".join(examples[:3])), highlight=False
    )
