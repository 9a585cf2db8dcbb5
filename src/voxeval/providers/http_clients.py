"""Connection-pooled HTTP clients shared by every endpoint of a process.

Building an ``httpx`` client costs milliseconds of CPU (an SSL context, a pool); one per
request or per system wastes them and the open connections. Endpoints instead ask here for
the client of their (base URL, auth variable, timeout, pool size): sync clients live until
the process exits; async clients belong to one event loop and are closed when the runner's
loop finishes (``close_async_clients``). Credentials are never held by a client: headers
are read at request time by the endpoint.
"""

from __future__ import annotations

import asyncio
import atexit
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


def _limits(key: ClientKey) -> httpx.Limits:
    return httpx.Limits(
        max_connections=key.max_connections, max_keepalive_connections=key.max_connections
    )


_sync: dict[ClientKey, httpx.Client] = {}
_async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ClientKey, httpx.AsyncClient]]
_async = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def shared_client(key: ClientKey) -> httpx.Client:
    """The process's sync client for ``key`` (thread-safe; made on first use)."""
    with _lock:
        client = _sync.get(key)
        if client is None or client.is_closed:
            client = httpx.Client(timeout=httpx.Timeout(key.timeout_s), limits=_limits(key))
            _sync[key] = client
        return client


def shared_async_client(key: ClientKey) -> httpx.AsyncClient:
    """The running event loop's async client for ``key``."""
    loop = asyncio.get_running_loop()
    with _lock:
        clients = _async.setdefault(loop, {})
        client = clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=httpx.Timeout(key.timeout_s), limits=_limits(key))
            clients[key] = client
        return client


async def close_async_clients() -> None:
    """Close the running loop's async clients (the runner calls this before its loop ends)."""
    loop = asyncio.get_running_loop()
    with _lock:
        clients = list(_async.pop(loop, {}).values())
    for client in clients:
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
