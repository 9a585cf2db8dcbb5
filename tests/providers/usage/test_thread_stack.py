"""ThreadStack: the shared per-thread stack behind count_requests and usage_ledger."""

from __future__ import annotations

import asyncio
import threading

from voxeval.providers.usage.thread_stack import ThreadStack


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


def test_stack_follows_a_task_across_awaits_and_into_to_thread() -> None:
    """Concurrent tasks each see only their own collectors, also inside asyncio.to_thread
    (which copies the context)."""
    stack: ThreadStack[list[str]] = ThreadStack()

    def in_thread(tag: str) -> None:
        for collector in stack.items():
            collector.append(f"thread:{tag}")

    async def unit(tag: str) -> list[str]:
        with stack.opened([]) as mine:
            await asyncio.sleep(0.01)  # the other task runs meanwhile
            await asyncio.to_thread(in_thread, tag)
            for collector in stack.items():
                collector.append(f"task:{tag}")
            return mine

    async def both() -> list[list[str]]:
        return list(await asyncio.gather(unit("a"), unit("b")))

    assert asyncio.run(both()) == [["thread:a", "task:a"], ["thread:b", "task:b"]]
    assert stack.items() == []
