"""Group commit of finished units: writes queued while a commit is under way share the
next transaction; each caller returns only once its own write is committed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import insert
from sqlalchemy.engine import Connection

from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import RunStore
from voxeval.store.group_commit import GroupCommitter
from voxeval.store.index import units_table
from voxeval.store.unit_rows import unit_row


def wait_for_queue(committer: GroupCommitter, n: int) -> None:
    deadline = time.monotonic() + 10
    while len(committer._queue) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def unit(item: str) -> WorkUnit:
    return WorkUnit(item, "sys", 0, "clean", category="cat")


def test_writes_queued_during_a_commit_share_the_next_transaction(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    units = [unit(f"q{i}") for i in range(9)]
    store.units.record_items(units)
    first_inside = threading.Event()
    let_go = threading.Event()
    original = store.writes.committer._commit

    def slow_first(batch):  # the first transaction stays open until the others queued
        if store.writes.committer.transactions == 0:
            first_inside.set()
            assert let_go.wait(10)
        original(batch)

    store.writes.committer._commit = slow_first  # type: ignore[method-assign]
    returned: list[str] = []

    def finish(u: WorkUnit) -> None:
        store.units.complete(u, {"duration": Score(value=1.5)})
        returned.append(u.key)

    leader = threading.Thread(target=finish, args=(units[0],))
    leader.start()
    assert first_inside.wait(10)
    others = [threading.Thread(target=finish, args=(u,)) for u in units[1:]]
    for thread in others:
        thread.start()
    wait_for_queue(store.writes.committer, 8)
    assert returned == []  # nobody returns before its write is committed
    assert store.units.finished_keys() == set()
    let_go.set()
    for thread in [leader, *others]:
        thread.join(10)
    assert sorted(returned) == sorted(u.key for u in units)
    assert store.units.finished_keys() == {u.key for u in units}
    assert (store.writes.committer.transactions, store.writes.committer.writes) == (2, 9)
    reopened = RunStore(tmp_path)  # what a resume sees
    assert reopened.units.finished_keys() == {u.key for u in units}


def test_a_failing_write_fails_only_its_caller(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    committer = GroupCommitter(store.index)
    hold, first_inside = threading.Event(), threading.Event()
    errors: dict[str, BaseException] = {}

    def row(key: str):
        def write(conn: Connection) -> None:
            if key == "first":
                first_inside.set()
                hold.wait(10)
            if key == "bad":
                raise ValueError("bad row")
            conn.execute(insert(units_table), [unit_row(store.run_id, unit(key), len(key), "done")])

        return write

    def submit(key: str) -> None:
        try:
            committer.submit(row(key))
        except ValueError as exc:
            errors[key] = exc

    threads = [threading.Thread(target=submit, args=(k,)) for k in ("first", "a", "bad", "b")]
    threads[0].start()
    assert first_inside.wait(10)
    for thread in threads[1:]:
        thread.start()
    wait_for_queue(committer, 3)
    hold.set()
    for thread in threads:
        thread.join(10)
    assert list(errors) == ["bad"]
    assert store.units.finished_keys() == {unit(k).key for k in ("first", "a", "b")}
    # the first alone; the batch of three rolled back, then its two good writes alone
    assert (committer.transactions, committer.writes) == (3, 3)


def test_an_interrupted_leader_releases_every_waiter(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    committer = GroupCommitter(store.index)

    def interrupted(conn: Connection) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        committer.submit(interrupted)
    committer.submit(lambda conn: None)  # the committer is usable again (no stale leader)
    assert committer.writes == 1


def test_a_follower_gets_its_future_at_once_and_it_completes_on_commit(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    committer = GroupCommitter(store.index)
    hold, inside = threading.Event(), threading.Event()

    def slow(conn: Connection) -> None:
        inside.set()
        assert hold.wait(10)

    leader = threading.Thread(target=committer.submit, args=(slow,))
    leader.start()
    assert inside.wait(10)
    later = committer.submit_later(lambda conn: None)  # a commit is under way: no waiting
    assert not later.done()
    hold.set()
    assert later.result(10) is None
    leader.join(10)
    assert (committer.transactions, committer.writes) == (2, 2)


def test_a_units_usage_rows_share_the_transaction_of_its_completion(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    u = unit("q0")
    store.units.record_items([u])
    store.recorder.start(u)
    before = store.writes.committer.transactions
    store.recorder.record_usage(u, "system:sys", 1, 10, 5, None, requests=1)
    store.recorder.record_usage(u, "scoring_asr", 2, 0, 0, None)
    assert store.writes.committer.transactions == before  # queued, nothing committed yet
    store.units.complete(u, {"duration": Score(value=1.0)})
    assert store.writes.committer.transactions == before + 1  # usage and completion: one commit
    summary = store.usage.summary()
    assert summary["by_provider"]["system:sys"]["calls"] == 1
    assert summary["by_provider"]["scoring_asr"]["calls"] == 2


def test_a_failing_queued_usage_write_fails_the_units_completion(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    u = unit("q0")
    store.units.record_items([u])

    def broken(conn: Connection) -> None:
        raise RuntimeError("usage row refused")

    store.writes.defer(u, broken)
    with pytest.raises(RuntimeError, match="usage row refused"):
        store.units.complete(u, {"duration": Score(value=1.0)})
    assert store.units.finished_keys() == {u.key}  # the completion itself was committed alone


def test_flush_commits_queued_writes_and_reads_see_them(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    u = unit("q0")
    store.units.record_items([u])
    store.recorder.record_usage(u, "judge", 3, 100, 20, 0.01)
    assert store.usage.summary()["by_provider"]["judge"]["calls"] == 3  # a read flushes
    before = store.writes.committer.transactions
    store.flush()  # nothing left: no transaction
    assert store.writes.committer.transactions == before
