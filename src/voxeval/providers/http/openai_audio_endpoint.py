"""Shared plumbing of providers behind OpenAI-compatible ``/audio/...`` endpoints: endpoint
settings, offline availability, and one retried POST whose final failure is ``EndpointError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONValue
from voxeval.providers.base import Availability, ProviderBase, option_text
from voxeval.providers.http.openai_http import (
    DEFAULT_TIMEOUT_S,
    EndpointOptions,
    HTTPEndpoint,
    open_endpoint,
    remote_availability,
)

T = TypeVar("T")


class OpenAIAudioEndpoint(ProviderBase):
    """Base of a provider posting to ``{base_url}/{path}``; subclasses set ``kind``, ``name``
    and ``path``. Requests are retried by the shared ``HTTPEndpoint`` (see openai_http)."""

    kind: str
    name: str
    path: str
    base_url: str
    model: str
    api_key_env: str | None
    timeout: float
    http: HTTPEndpoint

    @classmethod
    def provider_label(cls) -> str:
        return f"{cls.kind} '{cls.name}'"

    def _configure(
        self,
        base_url: str | None,
        model: str,
        api_key_env: str | None,
        endpoint: EndpointOptions,
        legacy_timeout: float | None = None,
    ) -> None:
        """Check the settings and open the endpoint; ``legacy_timeout`` is the older spelling
        ``timeout``, used when ``timeout_s`` is not given."""
        timeout_s = timeout_option(endpoint.get("timeout_s"), legacy_timeout, DEFAULT_TIMEOUT_S)
        avail = remote_availability(self.provider_label(), base_url, api_key_env)
        if not avail.available:
            raise ProviderUnavailable(avail.reason)
        if timeout_s <= 0:
            raise ConfigError(f"{self.provider_label()}: timeout_s must be > 0, got {timeout_s}")
        self.base_url = str(base_url).rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout_s)
        self.http = open_endpoint(
            self.base_url, api_key_env, {**endpoint, "timeout_s": self.timeout}, model
        )

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        return remote_availability(
            cls.provider_label(),
            option_text(options, "base_url"),
            option_text(options, "api_key_env"),
        )

    @property
    def endpoint(self) -> str:
        """The request URL as shown in messages (credentials masked)."""
        return self.http.shown(self.path)

    def stats(self) -> dict[str, float]:
        """Cumulative HTTP requests, retries, timeouts and failures since construction."""
        return {"requests": 0, "retries": 0, "timeouts": 0, **self.http.stats.snapshot()}

    def close(self) -> None:
        self.http.close()

    def _post(self, accept: Callable[[httpx.Response], T], **request: Any) -> T:
        """POST ``request`` (httpx keyword arguments) with auth and retries; ``accept`` turns
        the reply into the result or raises ``MalformedReply`` (retried)."""
        return self.http.post(self.path, accept, **request)

    async def _apost(self, accept: Callable[[httpx.Response], T], **request: Any) -> T:
        """``_post`` from an asyncio task (no thread waits on the server)."""
        return await self.http.apost(self.path, accept, **request)


def timeout_option(timeout_s: float | None, timeout: float | None, default: float) -> float:
    """``timeout_s``, or the older spelling ``timeout``, or the default."""
    if timeout_s is not None:
        return float(timeout_s)
    if timeout is not None:
        return float(timeout)
    return default
