"""Shared plumbing of providers behind OpenAI-compatible ``/audio/...`` endpoints: endpoint
settings, offline availability and one POST whose failures become ``EndpointError``."""

from __future__ import annotations

from typing import Any

import httpx

from voxeval.errors import ConfigError, EndpointError, ProviderUnavailable
from voxeval.providers.base import Availability
from voxeval.providers.openai_http import auth_headers, error_message, remote_availability


class OpenAIAudioEndpoint:
    """Base of a provider posting to ``{base_url}/{path}``; subclasses set ``kind``, ``name``
    and ``path``. One request per call, without retries."""

    kind: str
    name: str
    path: str
    base_url: str
    model: str
    api_key_env: str | None
    timeout: float

    @classmethod
    def provider_label(cls) -> str:
        return f"{cls.kind} '{cls.name}'"

    def _configure(
        self, base_url: str | None, model: str, api_key_env: str | None, timeout: float
    ) -> None:
        avail = remote_availability(self.provider_label(), base_url, api_key_env)
        if not avail.available:
            raise ProviderUnavailable(avail.reason)
        if timeout <= 0:
            raise ConfigError(f"{self.provider_label()}: timeout must be > 0, got {timeout}")
        self.base_url = str(base_url).rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self._client = httpx.Client(timeout=httpx.Timeout(self.timeout))

    @classmethod
    def availability(
        cls, base_url: str | None = None, api_key_env: str | None = None, **_: Any
    ) -> Availability:
        return remote_availability(cls.provider_label(), base_url, api_key_env)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/{self.path}"

    def _post(self, **request: Any) -> httpx.Response:
        """POST ``request`` (httpx keyword arguments) with auth; any failure -> EndpointError."""
        try:
            response = self._client.post(
                self.endpoint, headers=auth_headers(self.api_key_env), **request
            )
        except httpx.TimeoutException as exc:
            raise EndpointError(f"{self.endpoint}: timed out after {self.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise EndpointError(f"{self.endpoint}: connection failed ({exc})") from exc
        if response.status_code >= 400:
            raise EndpointError(
                f"{self.endpoint}: HTTP {response.status_code}: {error_message(response)}"
            )
        return response
