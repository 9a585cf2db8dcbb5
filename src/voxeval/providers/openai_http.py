"""The HTTP core shared by every OpenAI-compatible provider: retries, limits, auth, counters.

One ``OpenAIEndpoint`` wraps a thread-safe ``httpx.Client``. Requests to the same base URL
share a process-wide semaphore so that several providers pointing at one server together
respect its concurrency limit. The API key is read from the named environment variable at
request time and never stored on the object.
"""

from __future__ import annotations

import email.utils
import os
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.providers.base import Availability

# 408/409/425/429 are the "try again later" family; every 5xx may be transient.
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 300.0  # a server asking for longer is treated as broken, not waited on

_limits: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_limits_lock = threading.Lock()


def endpoint_semaphore(base_url: str, limit: int) -> threading.BoundedSemaphore:
    """The process-wide in-flight limit for ``base_url`` (shared by clients with that limit)."""
    with _limits_lock:
        key = (base_url, limit)
        if key not in _limits:
            _limits[key] = threading.BoundedSemaphore(limit)
        return _limits[key]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date)."""
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
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


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


class OpenAIEndpoint:
    """POST JSON to an OpenAI-compatible server with backoff, a concurrency limit and auth."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 30.0,
        max_concurrency: int = 8,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_retries < 0 or max_concurrency < 1 or timeout_s <= 0 or backoff_base_s < 0:
            raise ConfigError(
                f"endpoint {base_url}: need max_retries >= 0, max_concurrency >= 1, "
                "timeout_s > 0 and backoff_base_s >= 0"
            )
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.max_concurrency = int(max_concurrency)
        self._sleep = sleep
        self._semaphore = endpoint_semaphore(self.base_url, self.max_concurrency)
        self._client = httpx.Client(
            timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(max_connections=max(self.max_concurrency, 4)),
        )
        self.stats = EndpointStats()

    def close(self) -> None:
        self._client.close()

    def _headers(self) -> dict[str, str]:
        return {"Accept": "application/json", **auth_headers(self.api_key_env, self.base_url)}

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt + 1``: exponential with upward jitter of up to
        25%, so simultaneous clients spread out while each client's delays still grow."""
        base = min(self.backoff_max_s, self.backoff_base_s * (2**attempt))
        return min(self.backoff_max_s, base * (1.0 + 0.25 * random.random()))

    def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``base_url + path`` and return the decoded JSON reply.

        Retries timeouts, connection errors, 408/409/425/429 and 5xx (honouring Retry-After);
        any other 4xx raises ``EndpointError`` at once with the server's message.
        """
        url = f"{self.base_url}/{path.lstrip('/')}"
        headers = self._headers()
        reason = ""
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            self.stats.add(requests=1)
            try:
                with self._semaphore:
                    response = self._client.post(url, json=body, headers=headers)
            except httpx.TimeoutException:
                reason = f"timed out after {self.timeout_s:g} s"
                self.stats.add(timeouts=1)
            except httpx.TransportError as exc:
                reason = f"connection failed ({type(exc).__name__}: {exc})"
                self.stats.add(connection_errors=1)
            else:
                if response.status_code < 400:
                    return self._decode(url, response)
                status = response.status_code
                reason = f"HTTP {status}: {error_message(response)}"
                if status < 500 and status not in RETRYABLE_4XX:
                    self.stats.add(errors=1)
                    raise EndpointError(f"{url}: {reason}")
                wait = parse_retry_after(response.headers.get("Retry-After"))
            if attempt == self.max_retries:
                break
            delay = wait if wait is not None else self.backoff(attempt)
            self.stats.add(retries=1, backoff_s=delay)
            self._sleep(delay)
        self.stats.add(errors=1)
        raise EndpointError(f"{url}: gave up after {self.max_retries + 1} attempts; last: {reason}")

    def _decode(self, url: str, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError as exc:
            self.stats.add(errors=1)
            raise EndpointError(f"{url}: reply is not JSON: {response.text[:200]!r}") from exc
        if not isinstance(data, dict):
            raise EndpointError(f"{url}: expected a JSON object, got {type(data).__name__}")
        return data

    def ping(self) -> Availability:
        """One GET of ``/models`` (no retries): is the server reachable and the key accepted?"""
        try:
            response = self._client.get(
                f"{self.base_url}/models", headers=self._headers(), timeout=min(self.timeout_s, 10)
            )
        except ProviderUnavailable as exc:
            return Availability(False, str(exc))
        except httpx.HTTPError as exc:
            return Availability(False, f"{self.base_url} unreachable ({type(exc).__name__})")
        if response.status_code >= 400:
            return Availability(
                False,
                f"{self.base_url}/models: HTTP {response.status_code}: {error_message(response)}",
            )
        return Availability(True, f"{self.base_url} answered")
