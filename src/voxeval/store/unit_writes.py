"""The index writes of units and their queued bookkeeping.

A unit's bookkeeping rows (its start, what it cost) are queued (``defer``) for the next
commit instead of paying one commit each; the unit's completion or failure then waits for
them too (``joined``), so a unit never counts as finished with rows of it still uncommitted.
While a unit's interaction runs its bookkeeping can be held back (``hold``) so that it
commits exactly with the unit's ``interacted`` mark."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from voxeval.store.batched_writes import Write
from voxeval.store.group_commit import GroupCommitter
from voxeval.store.index import RunIndex
from voxeval.store.records import UnitLike


class UnitWrites:
    """The committer of one run's index writes and each unit's queued bookkeeping."""

    def __init__(self, index: RunIndex) -> None:
        self.committer = GroupCommitter(index)  # finished units commit together
        self._lock = threading.Lock()
        self._deferred: dict[str, list[Future[None]]] = {}  # unit key -> queued writes
        # unit key -> bookkeeping writes kept out of every commit until the unit's
        # interaction is marked (``hold``)
        self._held: dict[str, list[Write]] = {}

    def submit_later(self, *writes: Write) -> Future[None]:
        """Commit ``writes`` together (see ``GroupCommitter.submit_later``)."""
        return self.committer.submit_later(*writes)

    def flush(self) -> None:
        """Commit the bookkeeping writes still queued."""
        self.committer.flush()

    def defer(self, unit: UnitLike, write: Write) -> None:
        """Queue a bookkeeping write of ``unit`` for the next commit; its outcome is checked
        when the unit completes or fails (``with_deferred``). While the unit's bookkeeping is
        held (``hold``) the write waits for the unit's mark instead."""
        with self._lock:
            held = self._held.get(unit.key)
            if held is not None:
                held.append(write)
                return
        committed = self.committer.defer(write)
        with self._lock:
            self._deferred.setdefault(unit.key, []).append(committed)

    def with_deferred(self, unit: UnitLike, committed: Future[None]) -> Future[None]:
        """A future done when ``committed`` is; it fails if ``committed`` or any of the
        unit's writes queued before it (so committed by then) failed."""
        return joined(committed, self.take_deferred(unit))

    def take_deferred(self, unit: UnitLike) -> list[Future[None]]:
        with self._lock:
            return self._deferred.pop(unit.key, [])

    def hold(self, unit: UnitLike) -> None:
        """Keep the bookkeeping ``unit`` writes from now on out of every commit until
        ``take_held`` hands it to the unit's mark, or ``release`` queues it as usual."""
        with self._lock:
            self._held.setdefault(unit.key, [])

    def take_held(self, unit: UnitLike) -> list[Write]:
        """The writes held for ``unit`` (it is no longer held)."""
        with self._lock:
            return self._held.pop(unit.key, [])

    def release(self, unit: UnitLike) -> None:
        """Stop holding ``unit``'s bookkeeping: what was held goes to the next commit."""
        for write in self.take_held(unit):
            self.defer(unit, write)


def joined(last: Future[None], earlier: list[Future[None]]) -> Future[None]:
    """A future done when ``last`` is; it fails if ``last`` or any of ``earlier`` (queued
    before it, so committed by then) failed."""
    if not earlier:
        return last
    result: Future[None] = Future()

    def settle(_: Future[None]) -> None:
        for future in [*earlier, last]:
            error = future.exception()
            if error is not None:
                result.set_exception(error)
                return
        result.set_result(None)

    last.add_done_callback(settle)
    return result
