"""A worker of ``executor: processes`` tells the driver of each request a unit sends as it
sends it (issue 37, point 13): from the event loop and from a thread, named by the usage
component the protocols record it under, over a real connection to a loopback server."""

from __future__ import annotations

import asyncio
import socket
from types import SimpleNamespace
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from voxeval.providers.http.openai_http import HTTPEndpoint, watch_requests
from voxeval.providers.usage.usage_ledger import attributed
from voxeval.runner.process_link import Link
from voxeval.runner.process_worker import SentRequests
from voxeval.runner.unit_work import usage_component


async def _link(sock: socket.socket) -> Link:
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    return Link(reader, writer)


def test_each_request_is_reported_as_sent_with_its_component() -> None:
    def answer(path: str, body: Any) -> FakeResponse:
        return FakeResponse(json_body={"path": path})

    async def scenario(url: str) -> list[Any]:
        worker_end, driver_end = socket.socketpair()
        worker, driver = await _link(worker_end), await _link(driver_end)
        endpoint = HTTPEndpoint(url, max_retries=0)
        unit: Any = SimpleNamespace(key="q0__sut", system="sut")
        with watch_requests(SentRequests(worker, unit)):
            with attributed("agent"):  # a live call's agent: the system under test
                await endpoint.apost("/reply", lambda r: r.json(), json={})

            def judged() -> None:
                with attributed("judge"):
                    endpoint.post("/chat/completions", lambda r: r.json(), json={})
                endpoint.post("/other", lambda r: r.json(), json={})  # in no attributed block

            await asyncio.to_thread(judged)
        endpoint.post("/after", lambda r: r.json(), json={})  # the unit's block is over
        messages = [await driver.receive() for _ in range(3)]
        await worker.drain_and_close()
        assert await driver.receive() is None  # nothing else was reported
        await driver.drain_and_close()
        return messages

    with FakeOpenAIServer(answer) as server:
        messages = asyncio.run(scenario(server.url))
    assert messages == [
        ("sent", "q0__sut", "system:sut", 1),
        ("sent", "q0__sut", "judge", 1),
        ("sent", "q0__sut", "unattributed", 1),
    ]


def test_usage_components_match_the_protocols_records() -> None:
    assert usage_component("system", "web") == "system:web"  # single-turn, multi-turn
    assert usage_component("agent", "web") == "system:web"  # live calls
    assert usage_component("caller", "web") == "simulator"
    assert usage_component("scoring_asr", "web") == "scoring_asr"
