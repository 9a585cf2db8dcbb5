"""Connection-pooled HTTP clients shared by every endpoint of a process.

Building a client costs milliseconds of CPU (an SSL context, a pool); one per request or per
system wastes them and the open connections. Endpoints instead ask here for the client of
their (base URL, auth variable, timeout, pool size).

- Threads use an ``httpx.Client`` per key, kept until the process exits.
- Asyncio tasks send through an ``aiohttp`` session per key and event loop (``send_async``),
  closed when the runner's loop finishes (``close_async_clients``). aiohttp rather than
  httpx's async client because per request it costs about a tenth of the CPU (0.4 ms against
  3.4 ms for a multipart POST with a one-second WAV, measured against the 200 ms loopback
  server of ``bench/concurrency.py``), and at 64 requests in flight the event loop is the
  bottleneck. Requests are still built, and replies read, as ``httpx`` objects, and transport
  failures raised as ``httpx`` errors, so both paths share the code around them.

Credentials are never held by a client: headers are read at request time by the endpoint.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import ssl
import threading
import weakref
from dataclasses import dataclass

import aiohttp
import httpx
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL


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


@dataclass(frozen=True)
class EnvRouting:
    """The proxy the environment sets for one base URL (``HTTP_PROXY``, ``HTTPS_PROXY``,
    ``NO_PROXY``), as httpx reads it for the thread path (httpx ignores ``.netrc``, so this
    does too). Looked up once per session: aiohttp's own ``trust_env`` looks the proxy and
    ``.netrc`` up again for every request, each time on a worker thread (two thread hops a
    request)."""

    proxy: URL | None = None
    proxy_auth: aiohttp.BasicAuth | None = None


def env_routing(base_url: str) -> EnvRouting:
    try:
        proxy, proxy_auth = get_env_proxy_for_url(URL(base_url))
    except LookupError:  # no proxy for this scheme, or NO_PROXY covers the host
        return EnvRouting()
    return EnvRouting(proxy, proxy_auth)


@dataclass
class _Session:
    client: aiohttp.ClientSession
    routing: EnvRouting


_sync: dict[ClientKey, httpx.Client] = {}
_async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[ClientKey, _Session]] = (
    weakref.WeakKeyDictionary()
)
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


def async_session(key: ClientKey) -> aiohttp.ClientSession:
    """The running event loop's session for ``key`` (made on first use; used on the loop's
    own thread only)."""
    return _loop_session(key).client


def _loop_session(key: ClientKey) -> _Session:
    loop = asyncio.get_running_loop()
    with _lock:
        sessions = _async.setdefault(loop, {})
        session = sessions.get(key)
        if session is None or session.client.closed:
            session = sessions[key] = _Session(_new_session(key), env_routing(key.base_url))
        return session


def _new_session(key: ClientKey) -> aiohttp.ClientSession:
    # httpx's Timeout(t) bounds connecting (with the wait for a pooled connection) and every
    # read by t each; these are aiohttp's equivalents. Bodies are left compressed, so that
    # httpx decodes them as it would its own replies; the proxy comes from
    # ``env_routing`` (once, not per request); no cookies are kept between requests.
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(
            limit=key.max_connections, limit_per_host=0, ssl=_ssl_context()
        ),
        timeout=aiohttp.ClientTimeout(total=None, connect=key.timeout_s, sock_read=key.timeout_s),
        auto_decompress=False,
        trust_env=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    )


async def send_async(key: ClientKey, request: httpx.Request) -> httpx.Response:
    """Send ``request`` (its body already read) through the loop's session for ``key`` and
    return the whole reply. Transport failures raise the ``httpx`` error of the same kind
    (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``, ``RemoteProtocolError``,
    ``ReadError``), the aiohttp one as its cause."""
    session = _loop_session(key)
    routing = session.routing
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
    try:
        async with session.client.request(
            request.method,
            URL(str(request.url), encoded=True),
            headers=headers,
            data=request.content,
            allow_redirects=False,
            proxy=routing.proxy,
            proxy_auth=routing.proxy_auth,
        ) as reply:
            body = await reply.read()
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx.ConnectTimeout(_described(exc, "connecting"), request=request) from exc
    except TimeoutError as exc:  # aiohttp's read timeouts are TimeoutError too
        raise httpx.ReadTimeout(_described(exc, "waiting for the reply"), request=request) from exc
    except aiohttp.ClientConnectorError as exc:
        raise httpx.ConnectError(_described(exc), request=request) from exc
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError) as exc:
        raise httpx.RemoteProtocolError(_described(exc), request=request) from exc
    except aiohttp.ClientResponseError as exc:  # a reply that is not HTTP
        raise httpx.RemoteProtocolError(_described(exc), request=request) from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise httpx.ReadError(_described(exc), request=request) from exc
    return httpx.Response(
        reply.status, headers=list(reply.raw_headers), content=body, request=request
    )


def _described(exc: BaseException, doing: str = "") -> str:
    """aiohttp's timeouts carry no message: say what was being waited for."""
    return str(exc) or (f"timed out {doing}" if doing else type(exc).__name__)


async def close_async_clients() -> None:
    """Close the running loop's sessions (the runner calls this before its loop ends)."""
    loop = asyncio.get_running_loop()
    with _lock:
        sessions = list(_async.pop(loop, {}).values())
    for session in sessions:
        await session.client.close()


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
