"""The collector tuned around a run: startup objects frozen, young passes rarer, all undone."""

from __future__ import annotations

import gc
import weakref

import pytest

from voxeval.runner.collector_pause import YOUNG_COLLECTION_EVERY, collector_tuned


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_pause_freezes_then_restores_thresholds_and_objects() -> None:
    before = gc.get_threshold()
    gc.unfreeze()
    with collector_tuned():
        assert gc.get_freeze_count() > 1000  # the interpreter's and the test's objects
        assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, *before[1:])
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_nested_pauses_end_with_the_outermost_and_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_tuned():
        with collector_tuned():
            pass
        assert gc.get_freeze_count() > 0  # the outer block still pauses
        assert gc.get_threshold()[0] == YOUNG_COLLECTION_EVERY
        raise RuntimeError("a run failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_during_the_pause_are_still_collected() -> None:
    with collector_tuned():
        first, second = _Node(), _Node()
        first.other, second.other = second, first  # a reference cycle
        probe = weakref.ref(first)
        del first, second
        gc.collect()
        assert probe() is None
