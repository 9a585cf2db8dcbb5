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
import contextlib
import functools
import math
import ssl
import threading
import weakref
from collections.abc import Iterator
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
    """A provider's async pool as several clients, made as the load needs them: a request
    goes to the least busy client, and a new one is made when every client already has
    ``CONNECTIONS_PER_SHARD`` requests in flight (up to max_connections / that many), so
    each pool stays small and open connections are reused wave after wave."""

    def __init__(self, key: ClientKey) -> None:
        self.key = key
        self.most = max(1, math.ceil(key.max_connections / CONNECTIONS_PER_SHARD))
        self.clients: list[httpx.AsyncClient] = []
        self.busy: list[int] = []  # requests in flight per client

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.key.timeout_s),
            limits=_limits(self.key),
            verify=_ssl_context(),
        )

    def acquire(self) -> tuple[int, httpx.AsyncClient]:
        """(shard number, client) for one request; give the number back to ``release``."""
        best = min(range(len(self.busy)), key=self.busy.__getitem__, default=-1)
        if best < 0 or (self.busy[best] >= CONNECTIONS_PER_SHARD and len(self.busy) < self.most):
            self.clients.append(self._new_client())
            self.busy.append(0)
            best = len(self.busy) - 1
        self.busy[best] += 1
        return best, self.clients[best]

    def release(self, shard: int) -> None:
        self.busy[shard] -= 1


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


@contextlib.contextmanager
def leased_async_client(key: ClientKey) -> Iterator[httpx.AsyncClient]:
    """The running event loop's async client for ``key`` for one request: the least busy
    shard of its pool (see ``_Shards``). Used and released on the loop's own thread."""
    loop = asyncio.get_running_loop()
    with _lock:
        pools = _async.setdefault(loop, {})
        shards = pools.get(key)
        if shards is None:
            shards = pools[key] = _Shards(key)
    shard, client = shards.acquire()
    try:
        yield client
    finally:
        shards.release(shard)


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
