"""A system behind a plain HTTP endpoint (contract in docs/systems.md).

Request: ``POST url`` as multipart/form-data with
  - ``audio``: the last user turn as a WAV file,
  - ``history``: JSON list of earlier turns ``[{"role": "user"|"assistant", "text": ...}]``,
  - ``item_id``: the benchmark item id (may be empty).
Response: either a WAV body (``Content-Type: audio/wav``), or JSON
``{"audio": BASE64_WAV, "text": OPTIONAL_TEXT_CHANNEL, "details": OPTIONAL_OBJECT}``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import time
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from voxeval.audio import audio_from_bytes, audio_to_wav_bytes
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, VoxevalError
from voxeval.registry import register
from voxeval.systems.base import Reply, Turn
from voxeval.systems.options import parse_options


class HTTPOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(pattern=r"^https?://")
    timeout_s: float = Field(default=120.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    # Header name -> environment variable holding its value (tokens stay out of configs).
    headers_env: dict[str, str] = Field(default_factory=dict)


class HTTPSystemError(VoxevalError):
    """The endpoint failed or answered outside the contract."""


@register("system", "http")
class HTTPSystem:
    def __init__(self, name: str, options: HTTPOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> HTTPSystem:
        return cls(spec.name, parse_options(spec, HTTPOptions))

    def identity(self) -> dict[str, Any]:
        return {"type": "http", "url": self.options.url}

    def _headers(self) -> dict[str, str]:
        headers = dict(self.options.headers)
        for header, env in self.options.headers_env.items():
            value = os.environ.get(env)
            if value is None:
                raise ConfigError(
                    f"system {self.name!r}: header {header!r} needs environment variable {env}"
                )
            headers[header] = value
        return headers

    def reply(self, history: Sequence[Turn]) -> Reply:
        if not history or history[-1].role != "user" or history[-1].audio is None:
            raise ValueError("http.reply needs a history that ends with a user turn with audio")
        last = history[-1]
        assert last.audio is not None
        earlier = [{"role": t.role, "text": t.text} for t in history[:-1]]
        files = {"audio": ("user.wav", audio_to_wav_bytes(last.audio), "audio/wav")}
        data = {"history": json.dumps(earlier), "item_id": last.item_id or ""}
        url = self.options.url
        start = time.perf_counter()
        try:
            response = httpx.post(
                url, files=files, data=data, headers=self._headers(), timeout=self.options.timeout_s
            )
        except httpx.HTTPError as exc:
            raise HTTPSystemError(f"system {self.name!r}: request to {url} failed ({exc})") from exc
        total = time.perf_counter() - start
        if response.status_code >= 400:
            raise HTTPSystemError(
                f"system {self.name!r}: {url} answered HTTP {response.status_code}: "
                f"{response.text[:200]}"
            )
        return self._parse(response, total)

    def _parse(self, response: httpx.Response, total: float) -> Reply:
        where = f"system {self.name!r}: reply from {self.options.url}"
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype.startswith("audio/") or ctype == "application/octet-stream":
            audio = audio_from_bytes(response.content, source=self.options.url)
            return Reply(audio=audio, timing={"total_s": total})
        try:
            body = response.json()
        except ValueError as exc:
            raise HTTPSystemError(
                f"{where}: neither audio nor JSON ({ctype or 'no type'})"
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("audio"), str):
            raise HTTPSystemError(f"{where}: JSON must hold 'audio' as a base64 WAV string")
        try:
            wav = base64.b64decode(body["audio"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise HTTPSystemError(f"{where}: field 'audio' is not valid base64") from exc
        text = body.get("text")
        if text is not None and not isinstance(text, str):
            raise HTTPSystemError(f"{where}: field 'text' must be a string")
        raw_details = body.get("details")
        details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
        audio = audio_from_bytes(wav, source=self.options.url)
        return Reply(audio=audio, text=text, timing={"total_s": total}, details=dict(details))
