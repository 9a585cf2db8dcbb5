"""Thread work awaited from asyncio: results, errors and the context follow the call."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import Future

import pytest

from voxeval.providers.runtime.async_dispatch import await_future, run_blocking

TAG: contextvars.ContextVar[str] = contextvars.ContextVar("TAG", default="none")


def test_await_future_reads_a_settled_future_and_waits_for_one_that_is_not() -> None:
    async def main() -> tuple[int, int, str]:
        done: Future[int] = Future()
        done.set_result(1)
        first = await await_future(done)
        later: Future[int] = Future()
        threading.Timer(0.05, later.set_result, args=(2,)).start()
        second = await await_future(later)
        failed: Future[int] = Future()
        failed.set_exception(ValueError("bad write"))
        try:
            await await_future(failed)
        except ValueError as exc:
            return first, second, str(exc)
        raise AssertionError("the error was not raised")

    assert asyncio.run(main()) == (1, 2, "bad write")


def test_run_blocking_runs_in_another_thread_with_the_callers_context() -> None:
    async def main() -> tuple[str, bool]:
        TAG.set("unit-7")
        here = threading.get_ident()
        return await run_blocking(lambda: (TAG.get(), threading.get_ident() != here))

    assert asyncio.run(main()) == ("unit-7", True)


def test_run_blocking_raises_what_the_call_raised() -> None:
    def fail() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        asyncio.run(run_blocking(fail))
