"""Keep secrets out of everything voxeval writes: files, the index, the cache and the terminal.

Secrets are redacted *by value*. The values come from three places:

1. the *secret set* of the run: every value the config refers to — the contents of each
   ``*_env`` variable (``api_key_env``, ``headers_env: {Header: VAR}``), literal values of
   secret-named fields (``api_key``, ``Authorization`` headers, tokens inside ``extra_body``),
   and credentials inside URLs (user-info, ``?key=``/``token=`` query values). It is built
   with ``register_config_secrets`` when a run starts (or a command takes provider options)
   and kept for the life of the process;
2. the current values of environment variables whose *name* marks them as secret
   (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*`` ...);
3. URL credentials found in any text, whatever their length (``https://user:pw@host``,
   ``?api_key=...``).

A secret that was cut short (an error message truncating a server's body in the middle of an
echoed key) still has its leading part redacted. ``scrub`` additionally blanks secret-named
fields of structured records (config, provenance, score details).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel

from voxeval.json_types import JSONReadValue

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
# Query parameters that carry credentials although their names are not secret-like words.
_SECRET_QUERY_NAMES = {"sig", "signature", "auth"}
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
# Shorter values are not redacted by value: they would collide with ordinary words and numbers.
MIN_SECRET_LEN = 6
# A leading part of a secret at least this long is redacted too (truncated echoes), for
# secrets long enough that such a prefix cannot be an ordinary word.
_PREFIX_LEN = 12
_PREFIX_MIN_SECRET = 16

_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<info>[^\s/?#@\"'<>]+)@")
_URL_QUERY_VALUE = re.compile(r"(?P<head>[?&;](?P<name>[A-Za-z0-9_.\-]+)=)(?P<value>[^&#\s\"'<>]+)")


@functools.lru_cache(maxsize=4096)
def is_secret_field(name: str) -> bool:
    """``api_key``, ``hf-token``, ``clientSecret`` -> True; ``max_tokens``, ``keywords`` -> no.
    Cached: the same few field names recur in every stored record."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    parts = [p for p in re.split(r"[_\-.\s]+", spaced.lower()) if p]
    return any(p in _SECRET_PARTS for p in parts)


# Parts that make a field a credential on their own; "key" only with one of _KEY_QUALIFIERS
# before it (``api_key``, ``access-key``), since ``sort_key`` or a lookup ``key`` is not secret.
_CREDENTIAL_PARTS = _SECRET_PARTS - {"key"}
_KEY_QUALIFIERS = {"api", "access", "secret", "private", "auth", "client", "subscription"}
# A literal credential is one word of token characters, optionally after an auth scheme.
_CREDENTIAL_VALUE = re.compile(r"^(?:(?:Bearer|Basic|Token|Bot)\s+)?[A-Za-z0-9._~+/=:\-]+$")


@functools.lru_cache(maxsize=4096)
def is_credential_field(name: str) -> bool:
    """Stricter than ``is_secret_field``: a field whose literal value is added to the secret
    set (and then redacted from every text). ``api_key``, ``session_token``,
    ``Authorization`` -> True; ``sort_key``, ``key``, ``max_tokens`` -> False."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    parts = [p for p in re.split(r"[_\-.\s]+", spaced.lower()) if p]
    if any(p in _CREDENTIAL_PARTS for p in parts):
        return True
    return any(
        p == "key" and i > 0 and parts[i - 1] in _KEY_QUALIFIERS for i, p in enumerate(parts)
    )


def is_secret_query_name(name: str) -> bool:
    """A URL query parameter that carries a credential (``key``, ``token``, ``sig`` ...)."""
    return is_secret_field(name) or name.lower() in _SECRET_QUERY_NAMES


def looks_like_env_name(value: str) -> bool:
    return bool(_ENV_NAME.match(value))


# -- the secret set ---------------------------------------------------------------------------

_registered: set[str] = set()
_registered_lock = threading.Lock()
_registry_version = 0


def url_credentials(text: str) -> set[str]:
    """User-info and secret query values of a URL (``https://u:pw@h/p?key=K`` -> u, pw, K)."""
    if "://" not in text:
        return set()
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return set()
    found: set[str] = set()
    if parts.username:
        found.add(parts.username)
    if parts.password:
        found.add(parts.password)
    if parts.username or parts.password:
        found.update(basic_auth_forms(parts.username or "", parts.password or ""))
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if is_secret_query_name(name) and value:
            found.add(value)
    return found


def basic_auth_forms(username: str, password: str) -> set[str]:
    """Every form in which URL user-info travels or is echoed back: HTTP clients send
    ``Authorization: Basic base64(user:password)`` (percent-escapes decoded first), and a
    server may echo that header, the decoded pair, or a URL-quoted copy of either."""
    forms: set[str] = set()
    for user, word in {(username, password), (unquote(username), unquote(password))}:
        pair = f"{user}:{word}"
        forms.update((user, word, pair))
        for encoding in ("utf-8", "latin-1"):
            try:
                raw = pair.encode(encoding)
            except UnicodeEncodeError:
                continue
            token = base64.b64encode(raw).decode("ascii")
            forms.update((token, token.rstrip("="), f"Basic {token}", quote(token, safe="")))
    return {form for form in forms if form}


def without_url_credentials(text: str) -> str:
    """``text`` without user-info and secret query parameters when it is a URL (else as is):
    ``https://u:pw@h/v1?key=K&x=1`` -> ``https://h/v1?x=1``."""
    if "://" not in text or not url_credentials(text):
        return text
    parts = urlsplit(text)
    host = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
         if not is_secret_query_name(k)]
    )  # fmt: skip
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))


def _value_and_token(value: str) -> set[str]:
    """``"Bearer abc..."`` is a secret, and so is its credential part alone."""
    out = {value}
    last = value.split()[-1] if value.split() else ""
    if last and last != value:
        out.add(last)
    return out


def collect_config_secrets(data: JSONReadValue) -> set[str]:
    """Every secret value a config (or provider options) mapping refers to; see the module
    docstring. Environment variables named by ``*_env`` fields are read now."""
    found: set[str] = set()
    _collect(data, found)
    return {v for v in found if v}


def _env_values(names: JSONReadValue, found: set[str]) -> None:
    if isinstance(names, str):
        value = os.environ.get(names)
        if value:
            found.update(_value_and_token(value))
    elif isinstance(names, Mapping):
        for item in names.values():
            _env_values(item, found)
    elif isinstance(names, list | tuple):
        for item in names:
            _env_values(item, found)


def _collect(data: JSONReadValue, found: set[str]) -> None:
    if isinstance(data, Mapping):
        for key, value in data.items():
            name = str(key)
            if name.lower().endswith("_env") or name.lower() == "env":
                _env_values(value, found)
            elif is_credential_field(name) and isinstance(value, str) and value:
                if not looks_like_env_name(value) and _CREDENTIAL_VALUE.match(value):
                    found.update(_value_and_token(value))
            else:
                _collect(value, found)
    elif isinstance(data, list | tuple):
        for value in data:
            _collect(value, found)
    elif isinstance(data, str):
        found.update(url_credentials(data))


def add_secrets(values: Iterable[str]) -> None:
    """Add values to the process-wide secret set (values shorter than ``MIN_SECRET_LEN``
    are only redacted structurally, inside URLs)."""
    global _registry_version
    fresh = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LEN}
    with _registered_lock:
        if fresh - _registered:
            _registered.update(fresh)
            _registry_version += 1


def register_config_secrets(config: BaseModel | JSONReadValue) -> set[str]:
    """Build the secret set of a run config (a pydantic model or a mapping) or of provider
    options, and add it to the values redacted everywhere. Returns the values found."""
    data = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
    values = collect_config_secrets(data)
    add_secrets(values)
    return values


def registered_secrets() -> set[str]:
    with _registered_lock:
        return set(_registered)


def forget_registered_secrets() -> None:
    """Empty the process-wide secret set (for tests that need a clean slate)."""
    global _registry_version
    with _registered_lock:
        _registered.clear()
        _registry_version += 1


# A secret and its first _PREFIX_LEN characters: a text without the head cannot hold the secret,
# so one substring search per secret rules most texts out.
_Known = list[tuple[str, str]]
# (environment snapshot, registry version, known secrets): scanning os.environ item by item
# costs ~0.1 ms, paid for every string written; the raw mapping compared in C with a copy
# (about 1 µs, where building a tuple of its items to compare took 5) tells whether anything
# changed.
_known_cache: tuple[dict[Any, Any], int, _Known] | None = None


def env_secret_values() -> list[str]:
    """Current values of environment variables whose name marks them as secrets."""
    return sorted(
        {
            value
            for name, value in os.environ.items()
            if _SECRET_ENV.search(name) and len(value) >= MIN_SECRET_LEN
        },
        key=len,
        reverse=True,
    )


def _known_secrets() -> _Known:
    global _known_cache
    raw = getattr(os.environ, "_data", None)
    version = _registry_version
    cached = _known_cache
    if isinstance(raw, dict) and cached is not None and cached[1] == version and cached[0] == raw:
        return cached[2]
    snapshot = dict(raw) if isinstance(raw, dict) else None
    values = set(env_secret_values()) | registered_secrets()
    escaped = {json.dumps(v)[1:-1] for v in values}
    known = [(v, v[:_PREFIX_LEN]) for v in sorted(values | escaped, key=len, reverse=True)]
    if snapshot is not None:
        _known_cache = (snapshot, version, known)
    return known


def secret_values() -> list[str]:
    """Every value redacted from text: registered secrets, secret-named environment variables
    and their JSON-escaped forms, longest first (so a secret containing another wins)."""
    return [value for value, _ in _known_secrets()]


# -- redaction --------------------------------------------------------------------------------


def redact_text(text: str) -> str:
    """``text`` with every known secret (and any URL credential) replaced by ``<redacted>``."""
    return _redact(text, _known_secrets())


def redact_env_secrets(text: str) -> str:
    """Former name of ``redact_text`` (it now covers the run's secret set too)."""
    return redact_text(text)


def _redact(text: str, known: _Known) -> str:
    present = [(value, head) for value, head in known if head in text]
    for value, _ in present:  # whole secrets first, longest first
        if value in text:
            text = text.replace(value, REDACTED)
    for value, head in present:  # then leading parts left by truncation
        if len(value) >= _PREFIX_MIN_SECRET and head in text:
            text = _redact_prefixes(text, value)
    if "://" in text:
        text = _URL_USERINFO.sub(_userinfo_replacement, text)
    if "=" in text:
        text = _URL_QUERY_VALUE.sub(_query_replacement, text)
    return text


def _redact_prefixes(text: str, secret: str) -> str:
    """Replace leading parts (>= _PREFIX_LEN characters) of ``secret`` left by truncation."""
    out: list[str] = []
    start = 0
    head = secret[:_PREFIX_LEN]
    while (found := text.find(head, start)) >= 0:
        end = found + _PREFIX_LEN
        while end < len(text) and end - found < len(secret) and text[end] == secret[end - found]:
            end += 1
        out.append(text[start:found])
        out.append(REDACTED)
        start = end
    out.append(text[start:])
    return "".join(out)


def _userinfo_replacement(match: re.Match[str]) -> str:
    if match.group("info") == REDACTED:
        return match.group(0)
    return f"{match.group('scheme')}{REDACTED}@"


def _query_replacement(match: re.Match[str]) -> str:
    if not is_secret_query_name(match.group("name")) or match.group("value") == REDACTED:
        return match.group(0)
    return f"{match.group('head')}{REDACTED}"


def scrub(data: Any) -> Any:
    """A copy of ``data`` with secret-named string fields blanked and every string redacted."""
    # The secret values are looked up once per record, not once per string inside it.
    return _scrub(data, _known_secrets())


# Leaves returned as they are, told by their exact type: most of a record is numbers, and an
# ``isinstance(x, Mapping)`` check (an ABC) costs several times a type lookup.
_PLAIN_TYPES = frozenset({int, float, bool, type(None)})


def _scrub(data: Any, known: _Known) -> Any:
    kind = type(data)
    if kind is str:
        return _redact(data, known)
    if kind in _PLAIN_TYPES:
        return data
    if kind is dict or isinstance(data, Mapping):
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
                out[key] = _scrub(value, known)
        return out
    if isinstance(data, list | tuple):
        return [_scrub(v, known) for v in data]
    if isinstance(data, str):
        return _redact(data, known)
    return data
