"""Driver-worker messages over a real ``multiprocessing.Pipe`` (a Unix socket pair): values
arrive whole and in order, the end of the other side reads as None, and a worker's blocking
request is refused on its own event loop (which would have to read the answer)."""

from __future__ import annotations

import asyncio
import multiprocessing

import pytest

from tests.support.event_loops import run_coroutine
from voxeval.runner.process_link import open_link
from voxeval.runner.process_worker import DriverLeaseChannel, DriverRequests
from voxeval.runner.shared_limits import LimitValues


def test_messages_arrive_whole_and_in_order() -> None:
    big = bytes(range(256)) * 40_000  # 10 MB: more than a socket buffer holds at once

    async def main() -> list[object]:
        left_end, right_end = multiprocessing.Pipe(duplex=True)
        left, right = await open_link(left_end), await open_link(right_end)
        sent = [("unit", 1, {"a": [1.5, None]}), ("big", big), ("stop",)]
        for message in sent:
            left.send(message)
        got = [await right.receive() for _ in sent]
        await left.drain_and_close()
        got.append(await right.receive())  # the other end closed
        right.send(("late",))  # to a closed peer: dropped, no error
        await right.drain_and_close()
        return got

    got = run_coroutine(main)
    assert got[0] == ("unit", 1, {"a": [1.5, None]})
    assert got[1] == ("big", big)
    assert got[2] == ("stop",)
    assert got[3] is None


def test_a_blocking_request_on_the_loop_thread_is_refused() -> None:
    async def main() -> None:
        left_end, right_end = multiprocessing.Pipe(duplex=True)
        link, driver = await open_link(left_end), await open_link(right_end)
        requests = DriverRequests(link)
        channel = DriverLeaseChannel(requests, "k", LimitValues(max_concurrency=2))
        assert link.on_loop_thread()
        with pytest.raises(RuntimeError, match="would never be answered"):
            channel.lease_blocking(1, 0)
        # from a thread it blocks until the driver answers
        waiting = asyncio.create_task(asyncio.to_thread(channel.lease_blocking, 1, 0))
        kind, request_id, key, limits, want, tokens = await driver.receive()  # only this one
        assert (kind, key, limits, want, tokens) == ("lease", "k", LimitValues(2), 1, 0)
        requests.answered(request_id, 1)
        assert await waiting == 1
        await link.drain_and_close()
        await driver.drain_and_close()

    run_coroutine(main)


def test_an_abandoned_request_fails_instead_of_hanging() -> None:
    async def main() -> None:
        left_end, _right_end = multiprocessing.Pipe(duplex=True)
        link = await open_link(left_end)
        requests = DriverRequests(link)
        _, answer = requests.ask("stats", "k")
        requests.abandon_all()
        with pytest.raises(ConnectionError, match="driver closed"):
            answer.result(timeout=1)
        await link.drain_and_close()

    run_coroutine(main)
