"""The providers one run loads: one shared instance per (kind, spec), its identity written to
the run's provenance, the call cache in front of it, and the optional judges' slots.

Split out of ``RunContext`` (issue #41: no class over 25 methods); the context delegates its
``provider``, ``judge`` and ``request_stats`` here and lets go of everything on ``close``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from voxeval.config import ProviderSpec, RunConfig
from voxeval.errors import ProviderUnavailable, VoxevalError
from voxeval.json_types import JSONValue
from voxeval.providers.base import Provider, ProviderClass
from voxeval.providers.caching.cache import ProviderCache, cache_disabled, cached, default_cache
from voxeval.providers.factory import create_provider
from voxeval.registry import lookup
from voxeval.store import RunStore

# A provider as a config names it: a spec, its mapping (``{provider: NAME, ...options}``) or
# just the provider's name.
ProviderSpecLike: TypeAlias = ProviderSpec | Mapping[str, JSONValue] | str


def judge_refusal(kind: str, spec: ProviderSpecLike | None) -> str | None:
    """Why the provider of ``spec`` must never judge (a tiny baseline model), or None."""
    if spec is None:
        return None
    try:
        cls: ProviderClass = lookup(kind, canonical_spec(spec).provider)
    except VoxevalError:
        return None  # an unknown provider is reported by the plan check
    return cls.refused_as_judge or None


def canonical_spec(spec: ProviderSpecLike) -> ProviderSpec:
    if isinstance(spec, ProviderSpec):
        return spec
    if isinstance(spec, str):
        return ProviderSpec(provider=spec)
    return ProviderSpec.model_validate(dict(spec))


def spec_key(kind: str, spec: ProviderSpec) -> str:
    """A stable key for one provider configuration (option order does not matter)."""
    return kind + ":" + json.dumps(spec.model_dump(mode="json"), sort_keys=True, default=str)


# What an optional provider slot (a judge) holds: the provider, or why there is none.
OptionalProvider = tuple[Provider | None, str | None]


@dataclass
class ProviderPool:
    """The providers of one run. Thread-safe: protocol code loads them from worker threads."""

    config: RunConfig
    store: RunStore
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # a provider that failed to load is kept as its error, raised again on every request
    _providers: dict[str, Provider | VoxevalError] = field(default_factory=dict, repr=False)
    _cached_providers: dict[str, Provider] = field(default_factory=dict, repr=False)
    _key_locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _optional: dict[str, OptionalProvider] = field(default_factory=dict, repr=False)
    _call_cache: ProviderCache | None = field(default=None, repr=False)
    _call_cache_ready: bool = field(default=False, repr=False)

    def clear(self) -> None:
        """Forget every provider (they load anew on the next request)."""
        with self._lock:
            self._providers.clear()
            self._cached_providers.clear()
            self._key_locks.clear()
            self._optional.clear()
            self._call_cache = None
            self._call_cache_ready = False

    def key_lock(self, key: str) -> threading.Lock:
        """One lock per provider (or system) key: a slow load happens once, not per thread."""
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def loaded(self) -> list[tuple[str, Provider]]:
        """(key, provider) of every provider loaded so far (failed loads left out)."""
        with self._lock:
            return [
                (key, p) for key, p in self._providers.items() if not isinstance(p, BaseException)
            ]

    def provider(self, kind: str, spec: ProviderSpecLike, *, cache: bool = True) -> Provider:
        """See ``RunContext.provider``."""
        canonical = canonical_spec(spec)
        key = spec_key(kind, canonical)
        with self.key_lock(key):  # a slow model load happens once, not once per thread
            known = self._providers.get(key)
            if isinstance(known, BaseException):
                raise known
            created = known is None
            if known is None:
                try:
                    found = create_provider(kind, canonical)
                except VoxevalError as exc:
                    self._providers[key] = exc
                    raise
                self._providers[key] = found
            else:
                found = known
            instance = self._cached(key, kind, found) if cache else found
        if created:
            self._record_identity(kind, canonical, found)
        return instance

    def optional(
        self, slot: str, kind: str, spec: ProviderSpec | None, missing: str
    ) -> OptionalProvider:
        """The provider of an optional ``slot`` (``judge``, ``audio_judge``), or None and
        why: ``missing`` when unset, a refusal, or the load's error. Decided once per run."""
        with self._lock:
            if slot in self._optional:
                return self._optional[slot]
        refusal = judge_refusal(kind, spec) if slot in ("judge", "audio_judge") else None
        if spec is None:
            result: OptionalProvider = (None, missing)
        elif refusal is not None:
            result = (None, f"{slot} refused: {refusal}")
        else:
            try:
                result = (self.provider(kind, spec), None)
            except (ProviderUnavailable, VoxevalError) as exc:
                result = (None, f"{slot} unavailable: {exc}")
        with self._lock:
            self._optional.setdefault(slot, result)
            return self._optional[slot]

    def _cached(self, key: str, kind: str, provider: Provider) -> Provider:
        """``provider`` behind the run's call cache (one wrapper per spec), or itself when
        caching is off."""
        cache = self._cache()
        if cache is None:
            return provider
        wrapper = self._cached_providers.get(key)
        if wrapper is None:
            wrapper = cached(kind, provider, cache)
            self._cached_providers[key] = wrapper
        return wrapper

    def _cache(self) -> ProviderCache | None:
        """The provider call cache: ``config.cache_dir`` when set, else the shared default
        (``$VOXEVAL_CACHE_DIR``); None when ``VOXEVAL_NO_CACHE`` is set."""
        with self._lock:
            if not self._call_cache_ready:
                self._call_cache_ready = True

                if cache_disabled():
                    self._call_cache = None
                elif self.config.cache_dir:
                    self._call_cache = ProviderCache(Path(self.config.cache_dir).expanduser())
                else:
                    self._call_cache = default_cache()
            return self._call_cache

    def _record_identity(self, kind: str, spec: ProviderSpec, instance: Provider) -> None:
        identity: dict[str, JSONValue] = dict(instance.identity())
        self.store.recorder.add_model_identity(kind, {"provider": spec.provider, **identity})
