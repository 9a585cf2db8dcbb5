"""The index as a Ray or process worker's store has it: any use is refused, because only
the driver reads and writes the run's index (a worker's writes travel back in its journal:
``voxeval.runner.unit_work``)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import NoReturn

from sqlalchemy.engine import Connection


class WorkerIndex:
    """Stands for the index of the run ``run_id`` in a worker: reaching it is a bug, named
    as such."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def write(self) -> AbstractContextManager[Connection]:
        _refuse("write")

    def read(self) -> Connection:
        _refuse("read")

    def next_seq(self, conn: Connection) -> int:
        _refuse("next_seq")

    def dispose(self) -> None:
        """Nothing to let go of (no index was opened)."""


def _refuse(name: str) -> NoReturn:
    raise RuntimeError(
        f"a worker (Ray or process) tried to use the run index ({name}); only the driver writes it"
    )
