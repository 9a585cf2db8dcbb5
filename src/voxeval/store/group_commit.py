"""Group commit of index writes: many threads finishing units at once share one transaction.

``submit_later`` queues a write (a function of the open connection) and returns a future
that completes once that write is committed, so a unit is still ``done`` exactly when its row
is in the index (``submit`` waits for it). The first caller that finds no commit under way
becomes the leader: it commits everything queued so far in one transaction, then whatever
queued meanwhile, until the queue is empty; the others return at once with their future, so
an event loop awaits the commit without holding a worker thread. No extra thread is started,
and a killed process loses only writes whose commit had not completed (their units are re-run
on resume, as before).

``defer`` queues a write without committing: it goes into the transaction of the next
write that is submitted (by any thread), in queue order, so a unit's bookkeeping rows
(its start, what it cost) share the transaction of its completion instead of paying one
commit each; ``flush`` commits whatever is still queued.

A write is a function of the open connection, or ``Rows`` of a statement that many units
share: the rows of a batch then run together, one ``executemany`` per statement (see
``batched_writes``). If a batch's transaction fails, its writes are committed one by one, so
one bad write fails only its own caller.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from voxeval.store.batched_writes import Write, run_writes
from voxeval.store.index import RunIndex


@dataclass
class _Pending:
    writes: tuple[Write, ...]  # committed together, in this order
    committed: Future[None] = field(default_factory=Future)
    error: BaseException | None = None

    def settle(self) -> None:
        if self.committed.done():
            return
        if self.error is None:
            self.committed.set_result(None)
        else:
            self.committed.set_exception(self.error)


class GroupCommitter:
    """Commits the writes submitted by concurrent threads in shared transactions."""

    def __init__(self, index: RunIndex) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._queue: list[_Pending] = []
        self._leading = False
        self.transactions = 0  # commits made (a batch, or one write after a failed batch)
        self.writes = 0

    def submit(self, *writes: Write) -> None:
        """Run ``writes`` in one index transaction; return once they are committed (or raise
        what they raised)."""
        self.submit_later(*writes).result()

    def submit_later(self, *writes: Write) -> Future[None]:
        """Queue ``writes`` (committed together, in order); the future completes when they
        are committed (or holds their error). The calling thread commits the queue itself
        when no other thread is doing so."""
        pending = _Pending(writes)
        with self._lock:
            self._queue.append(pending)
            lead = not self._leading
            self._leading = True
        if lead:
            self._lead()
        return pending.committed

    def defer(self, *writes: Write) -> Future[None]:
        """Queue ``writes`` for the next commit (see the module docstring); the future
        completes when they are committed."""
        pending = _Pending(writes)
        with self._lock:
            self._queue.append(pending)
        return pending.committed

    def flush(self) -> None:
        """Commit every queued write (a no-op when none is queued)."""
        with self._lock:
            if not self._queue:
                return
        self.submit(_nothing)

    def _lead(self) -> None:
        batch: list[_Pending] = []
        try:
            while True:
                with self._lock:
                    batch, self._queue = self._queue, []
                    if not batch:
                        self._leading = False
                        return
                self._commit(batch)
                batch = []
        except BaseException as exc:  # interrupted mid-batch: nobody may wait forever
            with self._lock:
                stranded, self._queue = batch + self._queue, []
                self._leading = False
            for pending in stranded:
                if not pending.committed.done():
                    pending.error = exc
                    pending.settle()
            raise

    def _commit(self, batch: list[_Pending]) -> None:
        try:
            with self.index.write() as conn:
                run_writes(conn, [write for pending in batch for write in pending.writes])
            self._count(1, len(batch))
        except Exception:
            # the whole transaction rolled back: commit each write alone, so only a bad
            # one fails (and only its caller sees the error)
            for pending in batch:
                self._commit_alone(pending)
        for pending in batch:
            pending.settle()

    def _commit_alone(self, pending: _Pending) -> None:
        try:
            with self.index.write() as conn:
                run_writes(conn, pending.writes)
            self._count(1, 1)
        except Exception as exc:
            pending.error = exc

    def _count(self, transactions: int, writes: int) -> None:
        with self._lock:
            self.transactions += transactions
            self.writes += writes


def _nothing(conn: Connection) -> None:
    """A write that writes nothing: submitted to commit what is queued."""
