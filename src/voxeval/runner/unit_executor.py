"""The shape of the runner's unit executor (``voxeval.runner.execute.execute_units``), for
the executors that hand their units to it (processes, Ray) without importing it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TypeVar

from voxeval.api.context import RunContext
from voxeval.protocols.contract import WorkUnit
from voxeval.runner.comparison_steps import Outcome

OutcomeT = TypeVar("OutcomeT", bound=Outcome)
OutcomeT_co = TypeVar("OutcomeT_co", bound=Outcome, covariant=True)
S = TypeVar("S")  # what a session yields


class ExecuteUnits(Protocol[OutcomeT_co]):
    """Runs ``work`` on every unit with progress, Ctrl-C handling and error accounting (the
    part of its signature the remote executors use: their units commit in ``work``)."""

    def __call__(
        self,
        ctx: RunContext,
        units: list[WorkUnit],
        work: Callable[[WorkUnit], Awaitable[None]] | Callable[[WorkUnit], None],
        on_error: Callable[[WorkUnit, Exception], str],
        description: str,
        *,
        session: Callable[[], AbstractAsyncContextManager[S]] | None = None,
    ) -> OutcomeT_co: ...
