"""Whole-run reads shared within a block (``RunStore.reading_once``): a report reads every
unit, the scores of done units and the model usage rows in several places; inside the block
each is queried once and its parts agree with each other."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar, cast

T = TypeVar("T")


class _Snapshots(threading.local):
    """Per thread: name -> the ``reading_once`` block's result of that read (of whatever type
    its function reads), or None outside a block."""

    def __init__(self) -> None:
        self.current: dict[str, list[object]] | None = None


class SharedReads:
    """The calling thread's shared results inside ``reading_once`` (other threads read the
    index as usual)."""

    def __init__(self) -> None:
        self._snapshots = _Snapshots()

    @contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within the block, each whole-run read queries the index once and later calls share
        that result. Meant for blocks that only read (writes made inside are not seen by the
        shared results). Only the calling thread shares them."""
        outer = self._snapshots.current
        if outer is None:
            self._snapshots.current = {}
        try:
            yield
        finally:
            if outer is None:
                self._snapshots.current = None

    @property
    def active(self) -> bool:
        """True inside ``reading_once`` (on the calling thread)."""
        return self._snapshots.current is not None

    def read(self, name: str, read: Callable[[], list[T]]) -> list[T]:
        """``read()``, or inside ``reading_once`` the block's shared result (a new list)."""
        # name -> the block's result of that read (of whatever type its function reads)
        snapshot = self._snapshots.current
        if snapshot is None:
            return read()
        if name not in snapshot:
            snapshot[name] = list(read())
        # one function reads each name, so its list holds that function's items
        return cast(list[T], list(snapshot[name]))
