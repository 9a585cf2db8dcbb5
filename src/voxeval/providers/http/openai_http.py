"""The HTTP core shared by every remote provider and HTTP system: retries, limits, auth, counters.

One ``HTTPEndpoint`` posts through the process's shared connection pool for its server (sync
from threads, async from asyncio tasks). Every request it sends is retried (``tenacity``'s
``Retrying``/``AsyncRetrying`` drive the attempts) with exponential back-off on timeouts,
connection errors, 408/409/425/429 and 5xx (honouring ``Retry-After``) and, when the caller's
``accept`` function says so, on replies that cannot be used (malformed
JSON, no choices, undecodable audio). Requests to the same provider (base URL and model) wait
on one process-wide rate limiter (concurrency, requests and tokens per minute, adaptive
back-off on 429; see ``voxeval.providers.usage.rate_limits``). The API key is read from the named
environment variable at request time and never stored on the object.

Every request, retry and timeout is counted twice: in the endpoint's cumulative ``stats`` and
in every ``count_requests()`` tally open in the calling context (thread or asyncio task), so
a system can report exactly what one reply cost.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import math
import os
import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, NoReturn, TypedDict, TypeVar, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import tenacity

from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.providers.base import Availability
from voxeval.providers.http.http_clients import ClientKey, send_async, shared_client
from voxeval.providers.usage.rate_limits import (
    ProviderLimits,
    RateLimiter,
    limiter_for,
    limiter_key,
)
from voxeval.providers.usage.thread_stack import ThreadStack

T = TypeVar("T")

# 408/409/425/429 are the "try again later" family; every 5xx may be transient.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 120.0  # a server asking for longer is waited on for this long at most

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 4
DEFAULT_BACKOFF_BASE_S = 0.5
DEFAULT_BACKOFF_MAX_S = 30.0
JITTER = 0.25  # each delay is stretched by up to 25%


class EndpointOptions(TypedDict, total=False):
    """The timeout, retry and concurrency options every OpenAI-compatible provider takes, written
    flat in its provider spec (``max_retries: 2``, not nested). Providers declare them once as
    ``**endpoint: Unpack[EndpointOptions]``; the plan check reads the fields and their types
    from here. Defaults are those of ``HTTPEndpoint``; ``timeout_s: null`` means the default."""

    timeout_s: float | None
    max_retries: int
    backoff_base_s: float
    backoff_max_s: float
    retry_after_max_s: float
    backoff_seed: int
    max_concurrency: int
    requests_per_minute: float | None
    tokens_per_minute: float | None
    sleep: Callable[[float], None]


def parse_retry_after(value: str | None, cap_s: float = MAX_RETRY_AFTER_S) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date), at most
    ``cap_s``; None when the header is missing or unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), cap_s)


def redact_url(url: str) -> str:
    """``url`` fit to show: user-info and query values replaced by ``***``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***") for k, _ in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def remote_availability(kind: str, base_url: str | None, api_key_env: str | None) -> Availability:
    """Configured enough to try? (No request is sent: doctor must stay offline and fast.)"""
    if not base_url:
        return Availability(False, f"{kind}: no base_url configured (an OpenAI-compatible server)")
    if api_key_env and not os.environ.get(api_key_env):
        return Availability(False, f"{kind}: environment variable {api_key_env} is not set")
    return Availability(True)


def auth_headers(api_key_env: str | None, where: str | None = None) -> dict[str, str]:
    """Bearer header from the named environment variable (the key is never stored); a missing
    variable raises ProviderUnavailable, prefixed with ``where`` when given."""
    if not api_key_env:
        return {}
    key = os.environ.get(api_key_env)
    if not key:
        prefix = f"{where}: " if where else ""
        raise ProviderUnavailable(
            f"{prefix}environment variable {api_key_env} (api_key_env) is not set"
        )
    return {"Authorization": f"Bearer {key}"}


def error_message(response: httpx.Response) -> str:
    """The server's own explanation, from the usual error shapes, else the body start."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err is not None:
            return str(err)[:500]
    return str(body)[:300]


class MalformedReply(Exception):
    """Raised by an ``accept`` function: the reply arrived but cannot be used (retryable)."""


@dataclass
class RequestCounts:
    """What a block of code cost in HTTP: requests sent (first tries and retries), retries,
    and the failures that caused them."""

    requests: int = 0
    retries: int = 0
    timeouts: int = 0
    connection_errors: int = 0
    http_errors: int = 0
    malformed_replies: int = 0
    backoff_s: float = 0.0

    def add(self, **amounts: float) -> None:
        for name, amount in amounts.items():
            if hasattr(self, name):
                setattr(self, name, getattr(self, name) + amount)

    def as_dict(self) -> dict[str, float]:
        # flat numbers: no deep copy needed (asdict's costs ~10x more, once per reply)
        return {name: getattr(self, name) for name in _COUNT_NAMES}


_COUNT_NAMES = tuple(f.name for f in fields(RequestCounts))
_tallies: ThreadStack[RequestCounts] = ThreadStack()


def count_requests() -> AbstractContextManager[RequestCounts]:
    """Count every request that endpoints send from this thread inside the block (nested
    blocks each see their own requests and those of the blocks inside them)."""
    return _tallies.opened(RequestCounts())


def watch_requests(tally: RequestCounts) -> AbstractContextManager[RequestCounts]:
    """``count_requests`` into ``tally`` (a subclass may act on each ``add``: a worker
    process reports every request to the driver as it is sent)."""
    return _tallies.opened(tally)


class EndpointStats:
    """Thread-safe cumulative counters of one endpoint client."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, float] = {}

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self._values[name] = self._values.get(name, 0) + amount

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return dict(self._values)


def backoff_delay(attempt: int, base_s: float, max_s: float, draw: float) -> float:
    """``base_s * 2**attempt`` stretched by ``JITTER * draw`` (``draw`` in [0, 1)), at most
    ``max_s``: concurrent callers spread out while each caller's delays still grow."""
    nominal = min(max_s, base_s * math.ldexp(1.0, min(attempt, 1023)))  # no float overflow
    return min(max_s, nominal * (1.0 + JITTER * draw))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class HTTPEndpoint:
    """POST to one server with back-off, shared limits and optional bearer auth.

    ``base_url`` plus a request path gives the URL (an empty path posts to ``base_url``
    itself). Attempts are ``max_retries + 1``; the delay before retry ``n`` (from 0) is
    ``backoff_base_s * 2**n`` stretched by up to 25% jitter drawn from a generator seeded with
    ``backoff_seed`` (the same schedule every run), capped at ``backoff_max_s``; a
    ``Retry-After`` header replaces it, capped at ``retry_after_max_s``.

    Every attempt waits on the provider's process-wide ``RateLimiter`` (``max_concurrency``,
    ``requests_per_minute``, ``tokens_per_minute``; key: the base URL, plus the model once
    ``limit_by_model`` is called); a 429 slows the whole provider (see
    ``voxeval.providers.usage.rate_limits``). Requests go through the process's shared connection
    pool for this server (``voxeval.providers.http.http_clients``): ``post`` from threads,
    ``apost`` from asyncio tasks.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_base_s: float = DEFAULT_BACKOFF_BASE_S,
        backoff_max_s: float = DEFAULT_BACKOFF_MAX_S,
        retry_after_max_s: float = MAX_RETRY_AFTER_S,
        backoff_seed: int = 0,
        max_concurrency: int = 8,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if (
            max_retries < 0
            or max_concurrency < 1
            or timeout_s <= 0
            or backoff_base_s < 0
            or backoff_max_s < 0
            or retry_after_max_s < 0
            or (requests_per_minute is not None and requests_per_minute <= 0)
            or (tokens_per_minute is not None and tokens_per_minute <= 0)
        ):
            raise ConfigError(
                f"endpoint {redact_url(base_url)}: need max_retries >= 0, max_concurrency >= 1, "
                "timeout_s > 0, backoff_base_s, backoff_max_s, retry_after_max_s >= 0 and "
                "requests_per_minute, tokens_per_minute > 0 when set"
            )
        self._url = base_url
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.retry_after_max_s = float(retry_after_max_s)
        self.max_concurrency = int(max_concurrency)
        self.limits = ProviderLimits(
            max_concurrency=self.max_concurrency,
            requests_per_minute=requests_per_minute,
            tokens_per_minute=tokens_per_minute,
        )
        self.limit_key = limiter_key(self.base_url)
        self._sleep = sleep
        self._rng = random.Random(backoff_seed)
        self._rng_lock = threading.Lock()
        self._client_key = ClientKey(
            self.base_url, api_key_env, self.timeout_s, max(self.max_concurrency, 4)
        )
        self.stats = EndpointStats()

    def limit_by_model(self, model: str | None) -> None:
        """Share limits with the endpoints of this base URL *and* ``model`` only."""
        self.limit_key = limiter_key(self.base_url, model)

    @property
    def limiter(self) -> RateLimiter:
        return limiter_for(self.limit_key, self.limits)

    @property
    def _client(self) -> httpx.Client:
        return shared_client(self._client_key)

    def close(self) -> None:
        """Nothing to free: the connection pool is the process's (closed at exit)."""

    def url(self, path: str = "") -> str:
        return f"{self.base_url}/{path.lstrip('/')}" if path else self._url

    def _headers(self) -> dict[str, str]:
        return {"Accept": "application/json", **auth_headers(self.api_key_env, self.shown())}

    def shown(self, path: str = "") -> str:
        """The URL for messages: credentials in user-info or the query are masked."""
        return redact_url(self.url(path))

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt + 1`` (see ``backoff_delay``)."""
        with self._rng_lock:
            draw = self._rng.random()
        return backoff_delay(attempt, self.backoff_base_s, self.backoff_max_s, draw)

    def _count(self, **amounts: float) -> None:
        self.stats.add(**amounts)
        for tally in _tallies.items():
            tally.add(**amounts)

    def post(
        self,
        path: str,
        accept: Callable[[httpx.Response], T],
        *,
        headers: dict[str, str] | None = None,
        tokens: int = 0,
        **request: Any,
    ) -> T:
        """POST to ``path`` (httpx keyword arguments in ``request``) and return
        ``accept(response)`` for the first 2xx reply it accepts (``MalformedReply`` retries).
        ``tokens`` estimates the request's tokens for a ``tokens_per_minute`` limit.

        Other 4xx statuses raise ``EndpointError`` at once with the server's message; after
        the last attempt ``EndpointError`` names the endpoint, the attempts and the last
        failure (``status`` and ``failure`` are set on the exception).
        """
        url = self.url(path)
        sent_headers = {**self._headers(), **(headers or {})}
        attempts = _Attempts(self, path)
        limiter = self.limiter
        retrying = tenacity.Retrying(sleep=self._sleep, **attempts.policy())
        try:
            for attempt in retrying:
                with attempt:
                    self._count(requests=1)
                    limiter.acquire_blocking(tokens)
                    try:
                        response = self._client.post(url, headers=sent_headers, **request)
                    except httpx.HTTPError as exc:
                        limiter.release()
                        attempts.transport_failed(exc)
                    except BaseException:
                        limiter.release()
                        raise
                    return attempts.accepted(response, accept, limiter)
        except _Retry:
            pass
        raise attempts.give_up()

    async def apost(
        self,
        path: str,
        accept: Callable[[httpx.Response], T],
        *,
        headers: dict[str, str] | None = None,
        tokens: int = 0,
        **request: Any,
    ) -> T:
        """``post`` from an asyncio task: waiting on the server holds no thread."""
        url = self.url(path)
        sent_headers = {**self._headers(), **(headers or {})}
        attempts = _Attempts(self, path)
        limiter = self.limiter
        # Built and encoded once (retries resend the same bytes).
        prepared = httpx.Request("POST", url, headers=sent_headers, **request)
        prepared.read()

        async def sleep(delay: float) -> None:
            if self._sleep is time.sleep:
                await asyncio.sleep(delay)
            else:
                self._sleep(delay)  # a test's recording sleep

        retrying = tenacity.AsyncRetrying(sleep=sleep, **attempts.policy())
        try:
            async for attempt in retrying:
                with attempt:
                    self._count(requests=1)
                    await limiter.acquire(tokens)
                    try:
                        response = await send_async(self._client_key, prepared)
                    except httpx.HTTPError as exc:
                        limiter.release()
                        attempts.transport_failed(exc)
                    except BaseException:
                        limiter.release()  # cancelled while waiting: the slot is free again
                        raise
                    return attempts.accepted(response, accept, limiter)
        except _Retry:
            pass
        raise attempts.give_up()

    def post_json(
        self,
        path: str,
        body: dict[str, Any],
        check: Callable[[dict[str, Any]], None] | None = None,
        *,
        tokens: int = 0,
    ) -> dict[str, Any]:
        """POST JSON and return the decoded JSON object. A reply that is not a JSON object, or
        that ``check`` rejects with ``MalformedReply``, is retried like a server error."""
        return self.post(path, _json_acceptor(check), json=body, tokens=tokens)

    async def apost_json(
        self,
        path: str,
        body: dict[str, Any],
        check: Callable[[dict[str, Any]], None] | None = None,
        *,
        tokens: int = 0,
    ) -> dict[str, Any]:
        """``post_json`` from an asyncio task."""
        return await self.apost(path, _json_acceptor(check), json=body, tokens=tokens)

    def ping(self) -> Availability:
        """One GET of ``/models`` (no retries): is the server reachable and the key accepted?"""
        shown = self.shown("models")
        try:
            response = self._client.get(
                self.url("models"), headers=self._headers(), timeout=min(self.timeout_s, 10)
            )
        except ProviderUnavailable as exc:
            return Availability(False, str(exc))
        except httpx.HTTPError as exc:
            return Availability(False, f"{self.shown()} unreachable ({type(exc).__name__})")
        if response.status_code >= 400:
            return Availability(
                False, f"{shown}: HTTP {response.status_code}: {error_message(response)}"
            )
        return Availability(True, f"{self.shown()} answered")


class _Retry(Exception):
    """One attempt failed in a way worth another (tenacity retries on this type only)."""


# tenacity's stateless parts, made once (building them for every request costs ~3 µs).
_RETRY_ON = tenacity.retry_if_exception_type(_Retry)


@functools.cache
def _stop_after(attempts: int) -> tenacity.stop.stop_after_attempt:
    return tenacity.stop_after_attempt(attempts)


class _Attempts:
    """The bookkeeping of one request's attempts, shared by ``post`` and ``apost``: counters,
    the last failure, the limiter's release and 429 penalty, and the tenacity policy (how many
    attempts, the delay before each retry)."""

    def __init__(self, endpoint: HTTPEndpoint, path: str) -> None:
        self.endpoint = endpoint
        self.shown = endpoint.shown(path)
        self.attempts = 0
        self.reason = ""
        self.status: int | None = None
        self.failure = "http"
        self.wait: float | None = None

    def policy(self) -> dict[str, Any]:
        """tenacity's settings for ``Retrying``/``AsyncRetrying``: retry on ``_Retry`` only,
        ``max_retries + 1`` attempts, the endpoint's back-off (or the server's Retry-After)
        counted as a retry just before each sleep; the caller's exception is re-raised."""
        return {
            "retry": _RETRY_ON,
            "stop": _stop_after(self.endpoint.max_retries + 1),
            "wait": self._wait,
            "before_sleep": self._count_retry,
            "reraise": True,
        }

    def _wait(self, state: tenacity.RetryCallState) -> float:
        # tenacity asks for the wait before it checks the stop: after the last attempt no
        # delay is drawn, so the seeded jitter schedule stays the one of each real retry.
        if state.attempt_number > self.endpoint.max_retries:
            return 0.0
        return self.delay(state.attempt_number - 1)

    def _count_retry(self, state: tenacity.RetryCallState) -> None:
        self.endpoint._count(retries=1, backoff_s=state.upcoming_sleep)

    def accepted(
        self, response: httpx.Response, accept: Callable[[httpx.Response], T], limiter: RateLimiter
    ) -> T:
        """The accepted result of ``response``; raises ``_Retry`` when it is to be retried."""
        done, result = self.answered(response, accept, limiter)
        if not done:
            raise _Retry(self.reason)
        return cast(T, result)

    def transport_failed(self, exc: httpx.HTTPError) -> NoReturn:
        """Count a transport failure and raise ``_Retry`` (other httpx errors propagate)."""
        self.attempts += 1
        self.wait = None
        self.status = None
        if isinstance(exc, httpx.TimeoutException):
            self.failure = "timeout"
            self.reason = f"timed out after {self.endpoint.timeout_s:g} s"
            self.endpoint._count(timeouts=1)
        elif isinstance(exc, httpx.TransportError):
            self.failure = "connection"
            self.reason = f"connection failed ({type(exc).__name__}: {exc})"
            self.endpoint._count(connection_errors=1)
        else:
            raise exc
        raise _Retry(self.reason) from exc

    def answered(
        self, response: httpx.Response, accept: Callable[[httpx.Response], T], limiter: RateLimiter
    ) -> tuple[bool, T | None]:
        """(True, result) for an accepted reply; (False, None) when it is to be retried."""
        self.attempts += 1
        self.wait = None
        self.status = status = response.status_code
        ep = self.endpoint
        if status < 400:
            try:
                result = accept(response)
            except MalformedReply as exc:
                limiter.release()
                self.failure, self.reason = "malformed", f"unusable reply: {exc}"
                ep._count(malformed_replies=1)
                return False, None
            except BaseException:
                limiter.release()
                raise
            limiter.release(_tokens_used(result))
            return True, result
        self.failure, self.reason = "http", f"HTTP {status}: {error_message(response)}"
        ep._count(http_errors=1)
        if status < 500 and status not in RETRYABLE_4XX:
            limiter.release()
            ep._count(errors=1)
            raise EndpointError(
                f"{self.shown}: {self.reason}",
                endpoint=self.shown,
                status=status,
                attempts=self.attempts,
                failure=self.failure,
            )
        self.wait = parse_retry_after(response.headers.get("Retry-After"), ep.retry_after_max_s)
        if status == 429:
            # The whole provider slows down, not just this call. An injected sleep (tests)
            # simulates time, which the shared limiter's real clock cannot follow: then the
            # provider-wide pause is left out (the halving still applies).
            real_time = ep._sleep is time.sleep
            limiter.penalise(self.wait if real_time else None)
        limiter.release()
        return False, None

    def delay(self, attempt: int) -> float:
        return self.wait if self.wait is not None else self.endpoint.backoff(attempt)

    def give_up(self) -> EndpointError:
        self.endpoint._count(errors=1)
        return EndpointError(
            f"{self.shown}: gave up after {_plural(self.attempts, 'attempt')}; last: {self.reason}",
            endpoint=self.shown,
            status=self.status,
            attempts=self.attempts,
            failure=self.failure,
        )


def _json_acceptor(
    check: Callable[[dict[str, Any]], None] | None,
) -> Callable[[httpx.Response], dict[str, Any]]:
    def accept(response: httpx.Response) -> dict[str, Any]:
        data = decode_json_object(response)
        if check is not None:
            check(data)
        return data

    return accept


def _tokens_used(result: Any) -> int | None:
    """Total tokens an OpenAI-style JSON reply reports (None when it reports none)."""
    usage = result.get("usage") if isinstance(result, dict) else None
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if total is None:
        total = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
    try:
        return int(total)
    except (TypeError, ValueError):
        return None


def open_endpoint(
    base_url: str, api_key_env: str | None, options: EndpointOptions, model: str | None = None
) -> HTTPEndpoint:
    """An ``HTTPEndpoint`` for ``base_url`` set up from a provider's ``EndpointOptions``; its
    limits are shared with every endpoint of the same base URL and ``model``."""
    settings = cast(dict[str, Any], dict(options))
    timeout_s = settings.pop("timeout_s", None)
    endpoint = HTTPEndpoint(
        base_url,
        api_key_env=api_key_env,
        timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
        **settings,
    )
    endpoint.limit_by_model(model)
    return endpoint


def decode_json_object(response: httpx.Response) -> dict[str, Any]:
    """The reply's JSON object; anything else raises ``MalformedReply``."""
    try:
        data = response.json()
    except ValueError as exc:
        raise MalformedReply(f"not JSON: {response.text[:200]!r}") from exc
    if not isinstance(data, dict):
        raise MalformedReply(f"expected a JSON object, got {type(data).__name__}")
    return data
