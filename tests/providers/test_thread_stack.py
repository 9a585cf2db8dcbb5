"""ThreadStack: the shared per-thread stack behind count_requests and usage_ledger."""

from __future__ import annotations

import threading

from voxeval.providers.thread_stack import ThreadStack


def test_nested_equal_collectors_are_closed_by_identity() -> None:
    stack: ThreadStack[dict[str, int]] = ThreadStack()
    outer: dict[str, int] = {}
    with stack.opened(outer):
        inner: dict[str, int] = {}
        with stack.opened(inner) as got:
            assert got is inner
            assert [id(c) for c in stack.items()] == [id(outer), id(inner)]
        assert len(stack.items()) == 1 and stack.items()[0] is outer
    assert stack.items() == []


def test_each_thread_has_its_own_stack() -> None:
    stack: ThreadStack[list[int]] = ThreadStack()
    seen: list[int] = []
    with stack.opened([1]):
        worker = threading.Thread(target=lambda: seen.append(len(stack.items())))
        worker.start()
        worker.join()
        assert len(stack.items()) == 1
    assert seen == [0]
