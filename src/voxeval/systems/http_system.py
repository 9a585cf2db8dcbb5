"""A system behind a plain HTTP endpoint (contract in docs/systems.md).

Request: ``POST url`` as multipart/form-data with
  - ``audio``: the last user turn as a WAV file (absent when the turn is text only: a live call
    in text-only mode, which sends ``text`` instead),
  - ``history``: JSON list of earlier turns ``[{"role": "user"|"assistant", "text": ...}]``,
  - ``item_id``: the benchmark item id (may be empty).
Response: either a WAV body (``Content-Type: audio/wav``), or JSON
``{"audio": BASE64_WAV, "text": OPTIONAL_TEXT_CHANNEL, "details": OPTIONAL_OBJECT}``.
A text-only turn may be answered by JSON with ``text`` and no ``audio``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from voxeval.audio import Audio, audio_from_bytes, audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import AudioError, ConfigError, EndpointError, SystemFault
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.factory import ProviderSource
from voxeval.providers.http.openai_http import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_BACKOFF_MAX_S,
    MAX_RETRY_AFTER_S,
    HTTPEndpoint,
    RequestCounts,
    count_requests,
    redact_url,
)
from voxeval.systems.base import CALL, REPLY, SYSTEMS, Reply, SystemBase, Turn
from voxeval.systems.options import endpoint_fault, parse_options


class HTTPOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(pattern=r"^https?://")
    timeout_s: float = Field(default=120.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    # Header name -> environment variable holding its value (tokens stay out of configs).
    headers_env: dict[str, str] = Field(default_factory=dict)
    # Transport retries (429/5xx, connection errors, timeouts); a bad reply is never retried.
    max_retries: int = Field(default=2, ge=0)
    backoff_base_s: float = Field(default=DEFAULT_BACKOFF_BASE_S, ge=0)
    backoff_max_s: float = Field(default=DEFAULT_BACKOFF_MAX_S, ge=0)
    retry_after_max_s: float = Field(default=MAX_RETRY_AFTER_S, ge=0)
    backoff_seed: int = 0
    max_concurrency: int = Field(default=64, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)

    @field_validator("headers", "headers_env")
    @classmethod
    def _one_source_of_authorization(
        cls, value: dict[str, str], info: ValidationInfo
    ) -> dict[str, str]:
        # Credentials in the URL are sent as an Authorization header of their own; a second
        # one makes the client refuse every request before it is sent.
        url = str(info.data.get("url") or "")
        named = [h for h in value if h.strip().lower() == "authorization"]
        if named and has_userinfo(url):
            raise ValueError(
                f"{named[0]!r} header given together with credentials in url (user:password@): "
                "use one of them"
            )
        return value


def has_userinfo(url: str) -> bool:
    """Does ``url`` carry user-info (``http://user:password@host``)?"""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.username is not None or parts.password is not None


class HTTPSystemError(SystemFault):
    """The endpoint failed or answered outside the contract: a fault of the system under
    test, with its ``cause``."""


@SYSTEMS.register("http")
class HTTPSystem(SystemBase):
    # In a live call it is wrapped in the turn adapter (voxeval.systems.turn_call).
    capabilities = frozenset({REPLY, CALL})

    def __init__(self, name: str, options: HTTPOptions) -> None:
        self.name = name
        self.options = options
        o = options
        self.endpoint = HTTPEndpoint(
            o.url,
            timeout_s=o.timeout_s,
            max_retries=o.max_retries,
            backoff_base_s=o.backoff_base_s,
            backoff_max_s=o.backoff_max_s,
            retry_after_max_s=o.retry_after_max_s,
            backoff_seed=o.backoff_seed,
            max_concurrency=o.max_concurrency,
            requests_per_minute=o.requests_per_minute,
        )

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> HTTPSystem:
        return cls(spec.name, parse_options(spec, HTTPOptions))

    def identity(self) -> JSONObject:
        return {"type": "http", "url": self.options.url}

    def stats(self) -> dict[str, float]:
        """Cumulative HTTP requests, retries, timeouts and failures of this system."""
        return {"requests": 0, "retries": 0, "timeouts": 0, **self.endpoint.stats.snapshot()}

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "*/*", **self.options.headers}
        for header, env in self.options.headers_env.items():
            value = os.environ.get(env)
            if value is None:
                raise ConfigError(
                    f"system {self.name!r}: header {header!r} needs environment variable {env}"
                )
            headers[header] = value
        return headers

    def reply(self, history: Sequence[Turn]) -> Reply:
        """POST the last user turn. Failures are ``HTTPSystemError`` (a ``SystemFault``):
        ``timeout``, ``disconnect`` or ``exception`` once transport retries are spent,
        ``no_audio`` for a JSON reply without audio, ``malformed_output`` for anything else
        outside the contract. ``details["usage"]`` counts the requests sent."""
        files, data, needs_audio = self._request(history)
        headers = self._headers()
        start = time.perf_counter()
        with count_requests() as http:
            try:
                response = self.endpoint.post(
                    "", lambda r: r, files=files, data=data, headers=headers
                )
            except EndpointError as exc:
                fault = endpoint_fault(self.name, exc)
                raise HTTPSystemError(str(fault), cause=fault.cause) from exc
        return self._reply(response, time.perf_counter() - start, needs_audio, http)

    async def areply(self, history: Sequence[Turn]) -> Reply:
        """``reply`` from an asyncio task: no thread waits on the endpoint."""
        files, data, needs_audio = self._request(history)
        headers = self._headers()
        start = time.perf_counter()
        with count_requests() as http:
            try:
                response = await self.endpoint.apost(
                    "", lambda r: r, files=files, data=data, headers=headers
                )
            except EndpointError as exc:
                fault = endpoint_fault(self.name, exc)
                raise HTTPSystemError(str(fault), cause=fault.cause) from exc
        return self._reply(response, time.perf_counter() - start, needs_audio, http)

    def _request(
        self, history: Sequence[Turn]
    ) -> tuple[dict[str, tuple[str | None, bytes, str]], dict[str, str], bool]:
        """(files, form fields, whether the reply needs audio) of the POST for ``history``."""
        last = history[-1] if history else None
        if last is None or last.role != "user" or (last.audio is None and last.text is None):
            raise ValueError("http.reply needs a history that ends with a user turn")
        earlier = [{"role": t.role, "text": t.text} for t in history[:-1]]
        data = {"history": json.dumps(earlier), "item_id": last.item_id or ""}
        files: dict[str, tuple[str | None, bytes, str]]
        if last.audio is not None:
            files = {"audio": ("user.wav", audio_to_wav_bytes(last.audio), "audio/wav")}
        else:  # a plain form field (no file name), so the body stays multipart
            files = {"text": (None, (last.text or "").encode("utf-8"), "text/plain")}
        return files, data, last.audio is not None

    def _reply(
        self, response: httpx.Response, total: float, needs_audio: bool, http: RequestCounts
    ) -> Reply:
        reply = self._parse(response, total, needs_audio=needs_audio)
        reported = reply.details.get("usage")  # a system may report its own token counts
        usage = dict(reported) if isinstance(reported, dict) else {}
        reply.details["usage"] = {**usage, **http.as_dict()}
        return reply

    def _fault(self, problem: str, cause: str = "malformed_output") -> HTTPSystemError:
        where = f"system {self.name!r}: reply from {redact_url(self.options.url)}"
        return HTTPSystemError(f"{where}: {problem}", cause=cause)

    def _audio(self, data: bytes) -> Audio:
        try:
            return audio_from_bytes(data, source=redact_url(self.options.url))
        except AudioError as exc:
            raise self._fault(f"audio cannot be used ({exc})") from exc

    def _parse(self, response: httpx.Response, total: float, *, needs_audio: bool) -> Reply:
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype.startswith("audio/") or ctype == "application/octet-stream":
            return Reply(audio=self._audio(response.content), timing={"total_s": total})
        try:
            body = response.json()
        except ValueError as exc:
            raise self._fault(f"neither audio nor JSON ({ctype or 'no type'})") from exc
        if not isinstance(body, dict):
            raise self._fault("JSON must be an object holding 'audio' as a base64 WAV string")
        text = body.get("text")
        if text is not None and not isinstance(text, str):
            raise self._fault("field 'text' must be a string")
        if body.get("audio") is None and (needs_audio or not text):
            raise self._fault("JSON has no 'audio' (a base64 WAV string)", cause="no_audio")
        audio = None if body.get("audio") is None else self._audio(self._wav(body["audio"]))
        raw_details = body.get("details")
        details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
        return Reply(audio=audio, text=text, timing={"total_s": total}, details=dict(details))

    def _wav(self, encoded: JSONValue) -> bytes:
        if not isinstance(encoded, str):
            raise self._fault("JSON must hold 'audio' as a base64 WAV string")
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise self._fault("field 'audio' is not valid base64") from exc
