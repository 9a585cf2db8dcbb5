"""The compute lane serialises work from competing threads and times each section from the
moment it holds a slot: the wait is never counted. Checked on real threads running a
CPU-bound workload of our own (no timing thresholds: the assertions are about which intervals
overlap and what each reported figure covers)."""

import itertools
import threading
import time

import pytest

from voxeval.simulation.compute_lane import ComputeLane, unlaned

THREADS = 8


def busy_work(n: int = 20_000) -> int:
    """Pure-Python arithmetic: holds the interpreter, like a model holding the cores."""
    total = 0
    for k in range(n):
        total += k * k % 7
    return total


def contend(lane: ComputeLane, threads: int = THREADS, rounds: int = 3):  # type: ignore[no-untyped-def]
    """Each thread runs ``rounds`` sections through ``lane`` at once; returns per section
    (the section's own start/end stamps, the lane's reported seconds, concurrency seen)."""
    records: list[tuple[float, float, float, int]] = []
    active = 0
    guard = threading.Lock()
    start = threading.Barrier(threads)

    def section() -> tuple[float, float, int]:
        nonlocal active
        with guard:
            active += 1
            seen = active
        began = time.perf_counter()
        busy_work()
        ended = time.perf_counter()
        with guard:
            active -= 1
        return began, ended, seen

    def worker() -> None:
        start.wait()
        for _ in range(rounds):
            (began, ended, seen), spent = lane.run(section)
            with guard:
                records.append((began, ended, spent, seen))

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return records


def test_one_slot_runs_sections_one_at_a_time() -> None:
    records = contend(ComputeLane(1))
    assert len(records) == THREADS * 3
    assert max(seen for *_, seen in records) == 1
    spans = sorted((b, e) for b, e, _, _ in records)
    assert all(e1 <= b2 for (_, e1), (b2, _) in itertools.pairwise(spans))


def test_reported_time_covers_the_section_and_not_the_wait() -> None:
    before = time.perf_counter()
    records = contend(ComputeLane(1))
    whole = time.perf_counter() - before
    for began, ended, spent, _ in records:
        assert spent >= ended - began  # the whole section is counted
    # With one slot the timed intervals are disjoint, so together they fit in the run; had
    # the wait been counted, eight queued threads would report several times the run.
    assert sum(spent for _, _, spent, _ in records) <= whole


def test_two_slots_allow_two_sections_at_once_never_three() -> None:
    records = contend(ComputeLane(2))
    assert max(seen for *_, seen in records) <= 2


def test_nested_sections_do_not_take_a_second_slot() -> None:
    lane = ComputeLane(1)

    def outer() -> int:
        assert lane.holding()
        inner, _ = lane.run(busy_work, 1000)  # would deadlock if it waited for a slot
        return inner

    value, _ = lane.run(outer)
    assert value == busy_work(1000)
    assert not lane.holding()


def test_a_failing_section_frees_its_slot() -> None:
    lane = ComputeLane(1)

    def fails() -> None:
        raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError):
        lane.run(fails)
    assert not lane.holding()
    assert lane.run(busy_work, 10)[0] == busy_work(10)


def test_unlaned_runs_without_a_slot() -> None:
    value, spent = unlaned(busy_work, 100)
    assert value == busy_work(100) and spent >= 0


def test_a_lane_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        ComputeLane(0)


def test_each_thread_starts_outside_the_lane_and_sees_only_its_own_depth() -> None:
    lane = ComputeLane(2)
    seen: dict[str, bool] = {}
    inside = threading.Event()
    release = threading.Event()

    def holder() -> None:
        def section() -> None:
            seen["holder inside"] = lane.holding()
            inside.set()
            release.wait(5)

        lane.run(section)

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(5)
    seen["other thread meanwhile"] = lane.holding()  # a thread that never entered: depth 0
    release.set()
    thread.join(5)
    assert seen == {"holder inside": True, "other thread meanwhile": False}
    assert lane._held.depth == 0  # this thread's own holder, typed, starts at 0
