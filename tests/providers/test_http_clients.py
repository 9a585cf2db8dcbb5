"""Shared connection pools: one per (base URL, auth variable, timeout, pool size) per process,
reused by every endpoint and system; async pools per event loop, closed with it."""

from __future__ import annotations

import asyncio
import contextlib

from voxeval.config import SystemSpec
from voxeval.providers.http_clients import (
    ClientKey,
    close_async_clients,
    leased_async_client,
    shared_client,
)
from voxeval.providers.llm_openai import OpenAIChat
from voxeval.systems.http_system import HTTPSystem


def test_endpoints_of_one_server_share_one_client() -> None:
    url = "http://127.0.0.1:9/shared-pool-test"
    first = HTTPSystem.from_spec(SystemSpec(name="a", type="http", url=url))
    second = HTTPSystem.from_spec(SystemSpec(name="b", type="http", url=url))
    assert first.endpoint._client is second.endpoint._client
    other = HTTPSystem.from_spec(SystemSpec(name="c", type="http", url=url, timeout_s=5))
    assert other.endpoint._client is not first.endpoint._client  # other options, other pool
    llm_a = OpenAIChat(base_url="http://127.0.0.1:9/v1", model="x")
    llm_b = OpenAIChat(base_url="http://127.0.0.1:9/v1", model="x")
    assert llm_a.endpoint._client is llm_b.endpoint._client
    llm_a.close()  # closing one provider leaves the shared pool open for the other
    assert not llm_b.endpoint._client.is_closed


def test_async_pools_belong_to_their_loop_and_close_with_it() -> None:
    key = ClientKey("http://127.0.0.1:9", None, 10.0, 20)

    async def use() -> list[object]:
        with leased_async_client(key) as client:
            pass
        with leased_async_client(key) as again:
            assert again is client  # idle: the same client (and its open connections)
        await close_async_clients()
        assert client.is_closed
        return [client]

    first = asyncio.run(use())
    second = asyncio.run(use())
    assert not {id(c) for c in first} & {id(c) for c in second}
    assert shared_client(key) is shared_client(key)


def test_a_busy_pool_grows_by_shards_of_eight_requests_up_to_its_size() -> None:
    key = ClientKey("http://127.0.0.1:9", None, 10.0, 20)  # 20 connections: at most 3 shards

    async def use() -> list[int]:
        with contextlib.ExitStack() as held:
            clients = [held.enter_context(leased_async_client(key)) for _ in range(30)]
        counts = [sum(1 for c in clients if c is shard) for shard in dict.fromkeys(clients)]
        with leased_async_client(key) as after:  # all released: the least busy, the first
            assert after is clients[0]
        await close_async_clients()
        return counts

    # 8 requests fill the first shard, the 9th opens a second, the 17th a third; then the
    # least busy one takes each next request
    assert asyncio.run(use()) == [10, 10, 10]
