"""Connection-pooled HTTP clients shared by every endpoint of a process.

Building an ``httpx`` client costs milliseconds of CPU (an SSL context, a pool); one per
request or per system wastes them and the open connections. Endpoints instead ask here for
the client of their (base URL, auth variable, timeout, pool size): sync clients live until
the process exits; async clients belong to one event loop (a pool split into shards, see
``CONNECTIONS_PER_SHARD``) and are closed when the runner's loop finishes
(``close_async_clients``). Credentials are never held by a client: headers
are read at request time by the endpoint.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import itertools
import math
import ssl
import threading
import weakref
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class ClientKey:
    base_url: str
    api_key_env: str | None
    timeout_s: float
    max_connections: int


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every client: building one (loading the CA bundle) costs tens of
    milliseconds of CPU, which a client per loop or per shard would otherwise pay again."""
    return httpx.create_ssl_context()


def _limits(key: ClientKey) -> httpx.Limits:
    return httpx.Limits(
        max_connections=key.max_connections, max_keepalive_connections=key.max_connections
    )


# httpcore's async pool scans every connection it holds (with a socket check each) whenever a
# request starts or ends, so a pool of 64 busy connections costs O(64) system calls per
# request; a provider's async pool is therefore split into shards of this many connections,
# used in turn.
CONNECTIONS_PER_SHARD = 8


class _Shards:
    def __init__(self, key: ClientKey) -> None:
        count = max(1, math.ceil(key.max_connections / CONNECTIONS_PER_SHARD))
        limits = httpx.Limits(
            max_connections=key.max_connections, max_keepalive_connections=key.max_connections
        )
        self.clients = [
            httpx.AsyncClient(
                timeout=httpx.Timeout(key.timeout_s), limits=limits, verify=_ssl_context()
            )
            for _ in range(count)
        ]
        self.turn = itertools.count()

    def next(self) -> httpx.AsyncClient:
        return self.clients[next(self.turn) % len(self.clients)]


_sync: dict[ClientKey, httpx.Client] = {}
_async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ClientKey, _Shards]]
_async = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def shared_client(key: ClientKey) -> httpx.Client:
    """The process's sync client for ``key`` (thread-safe; made on first use)."""
    with _lock:
        client = _sync.get(key)
        if client is None or client.is_closed:
            client = httpx.Client(
                timeout=httpx.Timeout(key.timeout_s), limits=_limits(key), verify=_ssl_context()
            )
            _sync[key] = client
        return client


def shared_async_client(key: ClientKey) -> httpx.AsyncClient:
    """The running event loop's async client for ``key`` (one shard of its pool, in turn)."""
    loop = asyncio.get_running_loop()
    with _lock:
        pools = _async.setdefault(loop, {})
        shards = pools.get(key)
        if shards is None:
            shards = pools[key] = _Shards(key)
        return shards.next()


async def close_async_clients() -> None:
    """Close the running loop's async clients (the runner calls this before its loop ends)."""
    loop = asyncio.get_running_loop()
    with _lock:
        pools = list(_async.pop(loop, {}).values())
    for shards in pools:
        for client in shards.clients:
            await client.aclose()


def close_shared_clients() -> None:
    """Close every sync client (at exit; a later request opens a new one)."""
    with _lock:
        clients = list(_sync.values())
        _sync.clear()
    for client in clients:
        client.close()


def shared_client_count() -> int:
    with _lock:
        return len(_sync)


atexit.register(close_shared_clients)
