"""``RunStore.reading_once``: inside the block each whole-run read queries the index once and
later calls share the result (a report's summary, costs and scores.csv agree); outside it,
and after it, every call reads the index again."""

from __future__ import annotations

import threading
from pathlib import Path

from voxeval.protocols.contract import WorkUnit
from voxeval.providers.usage.usage_ledger import ComponentUsage
from voxeval.providers.usage.usage_meter import ModelUsage
from voxeval.scoring.score import Score
from voxeval.store import RunStore


def unit(item: str, system: str = "sys") -> WorkUnit:
    return WorkUnit(item, system, 0, "clean", category="cat")


def finish(store: RunStore, done: WorkUnit, value: float) -> None:
    store.recorder.start(done)
    store.units.complete(done, {"m": Score(value)})


def used(seconds: float) -> ComponentUsage:
    usage = ComponentUsage(calls=1)
    usage.add_model_usage(("asr", "p", "model"), ModelUsage(calls=1, audio_in_s=seconds))
    return usage


def test_reads_inside_the_block_share_one_snapshot(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    finish(store, unit("a"), 1.0)
    store.recorder.record_component_usage(unit("a"), "scoring", used(2.0))
    with store.reading_once():
        first = store.scores.load()
        units = store.units.records()
        usage = store.usage.model_rows()
        finish(store, unit("b"), 2.0)  # written meanwhile: not seen inside the block
        store.recorder.record_component_usage(unit("b"), "scoring", used(3.0))
        assert store.scores.load() == first and [r.value for r in first] == [1.0]
        assert [u.item_id for u in store.units.records()] == [u.item_id for u in units] == ["a"]
        assert store.usage.model_rows() == usage and len(usage) == 1
        # the narrower reads are not shared: they query the index
        assert [r.item_id for r in store.scores.load(only_done=False)] == ["a", "b"]
        assert [r.item_id for r in store.scores.load(system="sys")] == ["a", "b"]
    # after the block every read is fresh
    assert [r.value for r in store.scores.load()] == [1.0, 2.0]
    assert [u.item_id for u in store.units.records()] == ["a", "b"]
    assert [row["audio_in_s"] for row in store.usage.model_rows()] == [2.0, 3.0]


def test_callers_get_their_own_lists_and_units_filter_by_status(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.units.record_items([unit("a"), unit("b"), unit("c")])
    finish(store, unit("a"), 1.0)
    store.recorder.start(unit("b"))
    with store.reading_once():
        rows = store.scores.load()
        rows.clear()  # a caller's list is its own
        assert len(store.scores.load()) == 1
        assert [u.item_id for u in store.units.records("done")] == ["a"]
        assert [u.item_id for u in store.units.records("running")] == ["b"]
        assert [u.item_id for u in store.units.records("planned")] == ["c"]
        counts = store.units.status_counts()["sys"]
        assert (counts["done"], counts["pending"]) == (1, 2)


def test_blocks_nest_and_the_outer_one_ends_the_snapshot(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    finish(store, unit("a"), 1.0)
    with store.reading_once():
        assert len(store.scores.load()) == 1
        with store.reading_once():
            finish(store, unit("b"), 2.0)
            assert len(store.scores.load()) == 1  # still the outer block's snapshot
        assert len(store.scores.load()) == 1
    assert len(store.scores.load()) == 2


def test_other_threads_read_the_index(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    finish(store, unit("a"), 1.0)
    seen: list[int] = []
    with store.reading_once():
        assert len(store.scores.load()) == 1
        finish(store, unit("b"), 2.0)
        reader = threading.Thread(target=lambda: seen.append(len(store.scores.load())))
        reader.start()
        reader.join()
        assert len(store.scores.load()) == 1  # this thread's snapshot
    assert seen == [2]  # the other thread was outside the block
