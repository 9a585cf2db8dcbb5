"""A disk cache in front of every provider call.

A repeated call (same provider identity, parameters and inputs) is answered from disk
without running the model or sending a request. Entries live in
``$VOXEVAL_CACHE_DIR/calls/<kind>/<aa>/<key>.json`` (default ``~/.cache/voxeval``), with a
float32 ``<key>.wav`` beside them when the result carries audio, and record where they came
from (time, provider identity, parameters, voxeval version). Secrets never reach it: auth
material (URL credentials, secret-named fields) is left out of keys, and every known secret is
redacted from entries. Files are written to a temporary name and renamed, so concurrent
threads and processes never see half an entry.
``VOXEVAL_NO_CACHE=1`` turns caching off.

Calls that sample (temperature > 0 without a seed) are never cached: a benchmark drawing k
different transcripts or replies must get k real draws.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar, cast

import soundfile as sf

from voxeval.audio import Audio, audio_from_bytes
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import (
    ASR,
    LLM,
    MOS,
    TTS,
    VAD,
    ChatResponse,
    ForwardsVADMembers,
    Message,
    MOSResult,
    Provider,
    ProviderBase,
    ProviderResult,
    SpeechSegment,
    Transcript,
    Voice,
)
from voxeval.providers.caching.cache_codec import (
    Keyable,
    cache_key,
    canonical,
    decode_result,
    encode_result,
    without_auth,
)
from voxeval.providers.runtime.model_files import cache_root
from voxeval.redaction import redact_text, scrub

log = logging.getLogger(__name__)

SECRET_FIELDS = frozenset({"api_key", "apikey", "authorization", "password", "secret"})
_default_caches: dict[Path, ProviderCache] = {}
_default_lock = threading.Lock()

P = TypeVar("P", bound=Provider, covariant=True)
R = TypeVar("R", bound=ProviderResult)


def cache_disabled() -> bool:
    return os.environ.get("VOXEVAL_NO_CACHE", "").strip().lower() in {"1", "true", "yes", "on"}


def _scrub(value: JSONValue) -> JSONValue:
    """Provenance copy without fields that could hold secrets (defence in depth: identities
    and parameters are not supposed to contain any)."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if str(k).lower() not in SECRET_FIELDS}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


class _Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values = {"hits": 0, "misses": 0, "bypassed": 0, "write_errors": 0}

    def add(self, name: str) -> None:
        with self._lock:
            self.values[name] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.values)


class ProviderCache:
    """Cache entries under ``root/calls``; safe to share between threads and processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self.counters = _Counters()

    def entry_path(self, kind: str, key: str) -> Path:
        return self.root / "calls" / kind / key[:2] / f"{key}.json"

    def load(self, kind: str, key: str) -> ProviderResult | None:
        """The cached result for ``key``, or None (missing or unreadable entries are misses)."""
        path = self.entry_path(kind, key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            audio = None
            if entry.get("audio_file"):
                data = (path.parent / entry["audio_file"]).read_bytes()
                audio = audio_from_bytes(data, source=str(path.parent / entry["audio_file"]))
            return decode_result(entry["result"], audio)
        except FileNotFoundError:
            return None
        except Exception as exc:  # a damaged entry is recomputed and overwritten
            log.warning("ignoring unreadable cache entry %s (%s)", path, exc)
            return None

    def save(
        self, kind: str, key: str, result: ProviderResult, provenance: Mapping[str, Keyable]
    ) -> Path:
        """Store ``result``; the audio file goes first so a visible JSON entry is complete."""
        payload, audio = encode_result(result)
        path = self.entry_path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry: JSONObject = {
            "key": key,
            "provenance": scrub(_scrub(canonical(provenance))),
            "result": payload,
            "audio_file": None,
        }
        if audio is not None:
            entry["audio_file"] = f"{key}.wav"
            self._write_atomic(path.with_suffix(".wav"), lambda fh: _write_wav(fh, audio))
        # Secrets echoed into a result (or hiding in a parameter) never reach the cache folder.
        text = redact_text(json.dumps(entry, ensure_ascii=False, indent=1))
        self._write_atomic(path, lambda fh: fh.write(text.encode("utf-8")))
        return path

    @staticmethod
    def _write_atomic(path: Path, write: Callable[[BinaryIO], int | None]) -> None:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def discard(self, kind: str, key: str) -> bool:
        """Remove the entry for ``key`` (and its audio file); True when one was there."""
        path = self.entry_path(kind, key)
        path.with_suffix(".wav").unlink(missing_ok=True)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def stats(self) -> dict[str, int]:
        """Hits, misses, bypassed calls and failed writes through this cache object."""
        return self.counters.snapshot()


def _write_wav(fh: BinaryIO, audio: Audio) -> None:
    # float32 WAV without clipping: cached audio must come back sample-exact.
    sf.write(fh, audio.samples, audio.rate, format="WAV", subtype="FLOAT")


def default_cache() -> ProviderCache | None:
    """The shared cache at ``$VOXEVAL_CACHE_DIR`` (or ``~/.cache/voxeval``); None when
    ``VOXEVAL_NO_CACHE`` is set."""
    if cache_disabled():
        return None
    root = cache_root().expanduser()
    with _default_lock:
        if root not in _default_caches:
            _default_caches[root] = ProviderCache(root)
        return _default_caches[root]


class CachedProvider(ProviderBase, Generic[P]):
    """Base of the transparent wrappers: same protocol as the wrapped provider, plus
    ``cache_stats()``; every other attribute is the wrapped provider's. The members the
    provider contract declares are forwarded explicitly; the class-level ones
    (``availability``, ``refused_as_judge``) are asked of the registered class, never of a
    wrapper."""

    def __init__(self, kind: str, inner: P, cache: ProviderCache) -> None:
        self.kind = kind
        self.inner = inner
        self.cache = cache
        self.model = inner.model
        self._identity = inner.identity()
        self._counters = _Counters()
        self._signatures: dict[str, inspect.Signature] = {}

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not yet set (e.g. during unpickling): avoid infinite recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return self.inner.name

    def identity(self) -> JSONObject:
        return dict(self._identity)

    def stats(self) -> dict[str, float] | None:
        """The inner provider's HTTP counters (a cache hit sends nothing and adds nothing)."""
        return self.inner.stats()

    def cache_stats(self) -> dict[str, int]:
        return self._counters.snapshot()

    @property
    def hits(self) -> int:
        return self._counters.snapshot()["hits"]

    @property
    def misses(self) -> int:
        return self._counters.snapshot()["misses"]

    def _count(self, name: str) -> None:
        self._counters.add(name)
        self.cache.counters.add(name)

    def _call(
        self,
        method: str,
        fn: Callable[..., R],
        args: tuple[Keyable, ...],
        kwargs: Mapping[str, Keyable],
    ) -> R:
        """``fn`` (the inner provider's ``method``) on the arguments, answered from the cache
        when this exact call is stored there."""
        keyed = None if cache_disabled() else self._keyed(method, fn, args, kwargs)
        if keyed is None:
            self._count("bypassed")
            return fn(*args, **kwargs)
        key, arguments = keyed
        found = self.cache.load(self.kind, key)
        if found is not None:
            self._count("hits")
            # The entry under this key was written from this method's own result.
            hit = replace(found, cached=True) if isinstance(found, ChatResponse) else found
            return cast(R, hit)
        self._count("misses")
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        provenance: dict[str, Keyable] = {
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "kind": self.kind,
            "method": method,
            "provider": self._identity,
            "parameters": arguments,
            "compute_s": round(time.perf_counter() - started, 6),
            "voxeval_version": _version(),
        }
        if _empty_answer(result):
            # An empty chat answer is a failed call to its consumer (a simulator that said
            # nothing is retried); stored, every retry of the run would get it back.
            return result
        try:
            self.cache.save(self.kind, key, result, provenance)
        except (OSError, TypeError, ValueError) as exc:  # caching must never break a call
            self._count("write_errors")
            log.warning("could not write cache entry for %s.%s: %s", self.kind, method, exc)
        return result

    def _forget(
        self,
        method: str,
        fn: Callable[..., ProviderResult],
        args: tuple[Keyable, ...],
        kwargs: Mapping[str, Keyable],
    ) -> bool:
        """Drop the cached result of this exact call, if any: its consumer rejected it (a judge
        answer that could not be read), and a later run must ask again, not get it back."""
        if cache_disabled():
            return False
        keyed = self._keyed(method, fn, args, kwargs)
        return keyed is not None and self.cache.discard(self.kind, keyed[0])

    def _keyed(
        self,
        method: str,
        fn: Callable[..., ProviderResult],
        args: tuple[Keyable, ...],
        kwargs: Mapping[str, Keyable],
    ) -> tuple[str, dict[str, Keyable]] | None:
        """(cache key, parameters) of a call, or None when it is not cached: it samples
        without a seed, or an argument has no canonical form."""
        signature = self._signatures.get(method)
        if signature is None:  # one per method: building it costs more than a stub's call
            signature = self._signatures[method] = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        for name, param in signature.parameters.items():
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(arguments.pop(name, {}))
        input_name = next(iter(arguments))  # the first parameter is the thing being processed
        inputs = {input_name: arguments.pop(input_name)}
        if (arguments.get("temperature") or 0) > 0 and arguments.get("seed") is None:
            return None
        try:
            return self._key(method, arguments, inputs), arguments
        except TypeError as exc:
            log.debug("not caching %s.%s: %s", self.kind, method, exc)
            return None

    def _key(
        self, method: str, parameters: Mapping[str, Keyable], inputs: Mapping[str, Keyable]
    ) -> str:
        # Auth material does not change a result: rotating a key keeps the cache valid.
        return cache_key(self.kind, method, without_auth(self._identity), parameters, inputs)


def _empty_answer(result: ProviderResult) -> bool:
    return (
        isinstance(result, ChatResponse)
        and not (result.text or "").strip()
        and not result.tool_calls
        and result.parsed is None
        and result.audio is None
    )


def _version() -> str:
    from voxeval import __version__

    return __version__


class CachedASR(CachedProvider[ASR]):
    def transcribe(self, audio: Audio, **options: Keyable) -> Transcript:
        return self._call("transcribe", self.inner.transcribe, (audio,), options)


class CachedTTS(CachedProvider[TTS]):
    def synthesize(self, text: str, **options: Keyable) -> Audio:
        return self._call("synthesize", self.inner.synthesize, (text,), options)

    def voices(self) -> list[Voice]:
        return self.inner.voices()


class CachedLLM(CachedProvider[LLM]):
    def chat(self, messages: list[Message], **options: Keyable) -> ChatResponse:
        return self._call("chat", self.inner.chat, (messages,), options)

    def forget_chat(self, messages: list[Message], **options: Keyable) -> bool:
        """Drop the cached answer of ``chat(messages, **options)`` (see ``_forget``)."""
        return self._forget("chat", self.inner.chat, (messages,), options)


class CachedMOS(CachedProvider[MOS]):
    def predict(self, audio: Audio) -> MOSResult:
        return self._call("predict", self.inner.predict, (audio,), {})


class CachedVAD(ForwardsVADMembers, CachedProvider[VAD]):
    def segments(self, audio: Audio) -> list[SpeechSegment]:
        return self._call("segments", self.inner.segments, (audio,), {})


WRAPPERS: dict[str, type[CachedProvider[Provider]]] = {
    "asr": CachedASR,
    "tts": CachedTTS,
    "llm": CachedLLM,
    "audio_llm": CachedLLM,
    "mos": CachedMOS,
    "vad": CachedVAD,
}


def cached(kind: str, provider: Provider, cache: ProviderCache | None) -> Provider:
    """``provider`` behind ``cache`` (the provider itself when ``cache`` is None or caching is
    disabled by ``VOXEVAL_NO_CACHE``)."""
    if isinstance(provider, CachedProvider):
        provider = provider.inner
    if cache is None or cache_disabled():
        return provider
    if kind not in WRAPPERS:
        raise ValueError(f"no cache wrapper for provider kind {kind!r}; known: {sorted(WRAPPERS)}")
    return WRAPPERS[kind](kind, provider, cache)
