"""Keep secrets out of everything written to disk.

Two layers: (1) config fields whose name says they hold a secret (``api_key``, ``token``,
``client_secret``, ``password``, ``Authorization`` ...) are redacted unless the value is just
the *name* of an environment variable (``api_key_env: OPENAI_API_KEY``); (2) any text the store
writes is also scanned for the current values of secret-looking environment variables, so a key
that slipped into an error message or a provider identity is still redacted.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "<redacted>"

_SECRET_PARTS = {
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
    "authorization",
    "bearer",
    "cookie",
}
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_MIN_SECRET_LEN = 6


@functools.lru_cache(maxsize=4096)
def is_secret_field(name: str) -> bool:
    """``api_key``, ``hf-token``, ``clientSecret`` -> True; ``max_tokens``, ``keywords`` -> no.
    Cached: the same few field names recur in every stored record."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    parts = [p for p in re.split(r"[_\-.\s]+", spaced.lower()) if p]
    return any(p in _SECRET_PARTS for p in parts)


def looks_like_env_name(value: str) -> bool:
    return bool(_ENV_NAME.match(value))


def scrub(data: Any) -> Any:
    """A copy of ``data`` with secret-named string fields redacted (recursively)."""
    # The secret values are looked up once per record, not once per string inside it.
    return _scrub(data, env_secret_values())


def _scrub(data: Any, secrets: list[str]) -> Any:
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            if (
                isinstance(key, str)
                and is_secret_field(key)
                and isinstance(value, str)
                and value
                and not looks_like_env_name(value)
            ):
                out[key] = REDACTED
            else:
                out[key] = _scrub(value, secrets)
        return out
    if isinstance(data, list | tuple):
        return [_scrub(v, secrets) for v in data]
    if isinstance(data, str):
        return _redact(data, secrets)
    return data


# (environment snapshot, secret values): scanning os.environ item by item costs ~0.1 ms, paid
# for every string written; the raw mapping compared in C tells whether anything changed.
_env_cache: tuple[tuple[Any, ...], list[str]] | None = None


def env_secret_values() -> list[str]:
    """Current values of environment variables whose name marks them as secrets."""
    global _env_cache
    raw = getattr(os.environ, "_data", None)
    snapshot = tuple(raw.items()) if isinstance(raw, dict) else None
    cached = _env_cache
    if snapshot is not None and cached is not None and cached[0] == snapshot:
        return list(cached[1])
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value) >= _MIN_SECRET_LEN
    }
    result = sorted(values, key=len, reverse=True)
    if snapshot is not None:
        _env_cache = (snapshot, result)
    return list(result)


def redact_env_secrets(text: str) -> str:
    """Replace every occurrence of a secret environment value in ``text``."""
    return _redact(text, env_secret_values())


def _redact(text: str, secrets: list[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text
