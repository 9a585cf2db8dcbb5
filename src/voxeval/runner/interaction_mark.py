"""A local run's units whose interaction finished, so that ``kill -9`` re-asks at most
``concurrency`` systems.

A unit's reply is stored, then scored, then committed ``done``. Without a mark, a run killed
while replies were being scored lost every unit not yet committed, and resume asked their
systems again. The local executor now marks a unit ``interacted`` in the index once its
interaction is stored, in the same transaction as the usage rows of that interaction (the
store holds them back until then: ``RunStore.units.hold_usage``), and resume scores such a unit
from its folder without asking its system again. The cost of every interaction is therefore
in the index exactly when its mark is: a reused unit's first (and only) system call is
counted once, a re-run unit's killed attempt was never committed.

The system-call slot of a unit (``ctx.system_call_slots``) is held until the mark is
committed, so the units that talked to their systems without a committed mark, the only ones
asked again after a kill, are never more than ``concurrency``.

The requests such a unit had sent are not lost either: each one is appended to
``sent_requests.log`` in the unit's folder as it is sent (``sent_log``; no index write, no
fsync: a killed process's writes are in the page cache), and resume records them for the
unit as usage rows of 0 calls before the folder is emptied, as the processes executor does
for a killed worker's units (``record_lost_requests``). The log is deleted once the mark is
committed (the usage rows count those requests from then on).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from types import TracebackType

from voxeval.errors import SYSTEM_FAULT_CAUSES, SystemFault
from voxeval.store.records import UnitRecord

# The slots taken by the running task inside ``slots_held_until_marked`` (None outside).
_held_slots: ContextVar[list[asyncio.Semaphore] | None] = ContextVar(
    "voxeval_held_system_call_slots", default=None
)


class SystemCallSlots(asyncio.Semaphore):
    """``concurrency`` slots for units waiting on their systems. A slot left (``async with``)
    inside ``slots_held_until_marked`` is given back only when that block ends: the unit's
    reply has been stored and marked by then."""

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        held = _held_slots.get()
        if held is None:
            self.release()
        else:
            held.append(self)


@asynccontextmanager
async def slots_held_until_marked() -> AsyncIterator[None]:
    """Within the block, the running task keeps the system-call slots it leaves."""
    held: list[asyncio.Semaphore] = []
    token = _held_slots.set(held)
    try:
        yield
    finally:
        _held_slots.reset(token)
        for slots in held:
            slots.release()


def stored_fault(record: UnitRecord) -> SystemFault | None:
    """The system's fault recorded with a unit's mark (None: the system answered)."""
    if not record.system_fault:
        return None
    cause = record.system_fault if record.system_fault in SYSTEM_FAULT_CAUSES else "exception"
    return SystemFault(record.error or f"system {record.system!r} failed", cause=cause)
