"""Shared connection pools: one per (base URL, auth variable, timeout, pool size) per process,
reused by every endpoint and system; async sessions per event loop, closed with it; transport
failures of the async path raised as the httpx errors the sync path raises."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
from collections.abc import Awaitable, Callable

import httpx
import pytest

from voxeval.config import SystemSpec
from voxeval.providers.http.http_clients import (
    ClientKey,
    async_session,
    close_async_clients,
    send_async,
    shared_client,
)
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.systems.http_system import HTTPSystem

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


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


def test_async_sessions_belong_to_their_loop_and_close_with_it() -> None:
    key = ClientKey("http://127.0.0.1:9", None, 10.0, 20)
    other_key = ClientKey("http://127.0.0.1:9", None, 5.0, 20)

    async def use() -> object:
        session = async_session(key)
        assert async_session(key) is session  # the same session, and its open connections
        assert async_session(other_key) is not session
        assert session.connector is not None and session.connector.limit == 20
        await close_async_clients()
        assert session.closed
        assert async_session(key) is not session  # a closed session is replaced
        await close_async_clients()
        return session

    assert asyncio.run(use()) is not asyncio.run(use())
    assert shared_client(key) is shared_client(key)


async def _serving(handler: Handler) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head, await reader.readexactly(length)


def _exchange(handler: Handler, timeout_s: float = 5.0, **request: object) -> httpx.Response:
    """POST ``request`` (httpx keywords) through ``send_async`` to a loopback server that
    runs ``handler`` for each connection."""

    async def run() -> httpx.Response:
        server, url = await _serving(handler)
        try:
            prepared = httpx.Request("POST", f"{url}/v1/x?a=%2F", **request)  # type: ignore[arg-type]
            prepared.read()
            return await send_async(ClientKey(url, None, timeout_s, 4), prepared)
        finally:
            await close_async_clients()
            server.close()

    return asyncio.run(run())


def test_the_request_arrives_as_httpx_built_it_and_the_reply_comes_back_whole() -> None:
    seen: list[tuple[bytes, bytes]] = []
    reply = gzip.compress(b'{"ok": true}')

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(
            b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
            b"Content-Encoding: gzip\r\nX-Tag: a\r\nX-Tag: b\r\nContent-Length: %d\r\n\r\n"
            % len(reply)
            + reply
        )
        await writer.drain()
        writer.close()

    response = _exchange(
        handler,
        files={"audio": ("user.wav", b"RIFF1234", "audio/wav")},
        data={"item_id": "q7"},
        headers={"Authorization": "Bearer k"},
    )
    assert response.status_code == 201
    assert response.json() == {"ok": True}  # decoded from gzip once, by httpx
    assert response.headers.get_list("x-tag") == ["a", "b"]
    head, body = seen[0]
    assert head.startswith(b"POST /v1/x?a=%2F HTTP/1.1\r\n")  # the query kept as encoded
    assert b"\r\nauthorization: bearer k\r\n" in head.lower()  # names are case-blind
    assert b"multipart/form-data; boundary=" in head
    assert b'name="item_id"\r\n\r\nq7\r\n' in body
    assert b'filename="user.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF1234\r\n' in body


def test_a_refused_connection_is_a_connect_error() -> None:
    async def run() -> None:
        server, url = await _serving(lambda r, w: asyncio.sleep(0))
        server.close()
        await server.wait_closed()  # the port is free: nothing listens there now
        prepared = httpx.Request("POST", url, content=b"x")
        try:
            with pytest.raises(httpx.ConnectError) as caught:
                await send_async(ClientKey(url, None, 5.0, 4), prepared)
        finally:
            await close_async_clients()
        assert caught.value.request is prepared

    asyncio.run(run())


@pytest.mark.parametrize(
    "answer",
    [b"", b"SSH-2.0-OpenSSH_9.6\r\n\r\n"],
    ids=["closed-without-a-reply", "a-reply-that-is-not-http"],
)
def test_a_broken_reply_is_a_protocol_error(answer: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        if answer:
            writer.write(answer)
            await writer.drain()
        writer.close()

    with pytest.raises(httpx.RemoteProtocolError):
        _exchange(handler, content=b"x")


def test_a_server_slower_than_the_timeout_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(2.0)
        writer.close()

    with pytest.raises(httpx.ReadTimeout):
        _exchange(handler, timeout_s=0.3, content=b"x")


def _answering(name: bytes, seen: list[bytes]) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, _ = await _read_request(reader)
        seen.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(name), name))
        await writer.drain()
        writer.close()

    return handler


@pytest.mark.parametrize("bypass", [False, True])
def test_the_proxy_comes_from_the_environment_and_no_proxy_is_honoured(
    monkeypatch: pytest.MonkeyPatch, bypass: bool
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    direct_seen: list[bytes] = []
    proxy_seen: list[bytes] = []

    async def run() -> bytes:
        direct, direct_url = await _serving(_answering(b"direct", direct_seen))
        proxy, proxy_url = await _serving(_answering(b"proxy", proxy_seen))
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        if bypass:
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        try:
            prepared = httpx.Request("POST", f"{direct_url}/v1/x", content=b"x")
            reply = await send_async(ClientKey(direct_url, None, 5.0, 4), prepared)
            return reply.content
        finally:
            await close_async_clients()
            direct.close()
            proxy.close()

    answered = asyncio.run(run())
    if bypass:
        assert answered == b"direct" and direct_seen == [b"POST /v1/x HTTP/1.1"]
        assert proxy_seen == []
    else:  # a proxy gets the absolute URL
        assert answered == b"proxy" and proxy_seen[0].startswith(b"POST http://127.0.0.1:")
        assert direct_seen == []


def test_a_request_takes_no_worker_thread() -> None:
    """The environment is read once per session, not on a worker thread per request (as
    aiohttp's trust_env would): at 64 requests in flight those hops cost the event loop."""

    class NoThreads(concurrent.futures.ThreadPoolExecutor):
        def submit(self, *args: object, **kwargs: object) -> concurrent.futures.Future[object]:
            raise AssertionError("a worker thread was used")

    seen: list[bytes] = []

    async def run() -> list[bytes]:
        asyncio.get_running_loop().set_default_executor(NoThreads())
        server, url = await _serving(_answering(b"ok", seen))
        try:
            key = ClientKey(url, None, 5.0, 4)
            return [
                (await send_async(key, httpx.Request("GET", f"{url}/{i}"))).content
                for i in range(3)
            ]
        finally:
            await close_async_clients()
            server.close()

    assert asyncio.run(run()) == [b"ok"] * 3
    assert seen == [b"GET /0 HTTP/1.1", b"GET /1 HTTP/1.1", b"GET /2 HTTP/1.1"]
