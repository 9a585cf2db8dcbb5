"""What a protocol sees while it runs: the config, the store, shared providers and systems,
the judge, deterministic random streams and per-provider concurrency limits."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, overload

import numpy as np
from rich.console import Console

from voxeval.api.protocol import EvaluationProtocol
from voxeval.api.work_unit import WorkUnit
from voxeval.benchmarks.suite_info import SuiteInfo
from voxeval.config import ProviderSpec, RunConfig
from voxeval.errors import ConfigError, ProviderUnavailable, VoxevalError
from voxeval.providers.base import ASR, LLM, MOS, TTS, VAD, AudioLLM, Provider
from voxeval.providers.caching.cache import ProviderCache, cache_disabled, cached, default_cache
from voxeval.providers.factory import SpecLike, create_provider
from voxeval.providers.runtime.async_dispatch import await_future
from voxeval.registry import lookup
from voxeval.store import RunStore
from voxeval.systems.base import SystemUnderTest, TurnSystem
from voxeval.systems.factory import build_system

NO_JUDGE_REASON = (
    "no judge configured: set `judge:` in the config, e.g. "
    "judge: {provider: openai, base_url: https://api.openai.com/v1, model: gpt-4o-mini, "
    "api_key_env: OPENAI_API_KEY}"
)
NO_AUDIO_JUDGE_REASON = (
    "no audio judge configured: set `audio_judge:` in the config (an audio-capable "
    "OpenAI-compatible endpoint)"
)


def judge_refusal(kind: str, spec: ProviderSpec | dict[str, Any] | str | None) -> str | None:
    """Why the provider of ``spec`` must never judge (a tiny baseline model), or None."""
    if spec is None:
        return None
    try:
        cls = lookup(kind, canonical_spec(spec).provider)
    except VoxevalError:
        return None  # an unknown provider is reported by the plan check
    reason = getattr(cls, "refused_as_judge", None)
    return str(reason) if reason else None


def canonical_spec(spec: ProviderSpec | dict[str, Any] | str) -> ProviderSpec:
    if isinstance(spec, ProviderSpec):
        return spec
    if isinstance(spec, str):
        return ProviderSpec(provider=spec)
    return ProviderSpec(**spec)


# The counters of ``voxeval.providers.http.openai_http`` that ``request_stats`` reports.
REQUEST_COUNTERS = (
    "requests",
    "retries",
    "timeouts",
    "connection_errors",
    "http_errors",
    "malformed_replies",
    "errors",
)


def _stats_label(key: str, instance: Any) -> str:
    """``llm:openai`` for a provider key ``llm:{json spec}``; ``system:NAME`` for systems."""
    kind = key.partition(":")[0]
    if kind == "system":
        return key
    return f"{kind}:{getattr(instance, 'name', type(instance).__name__)}"


def spec_key(kind: str, spec: ProviderSpec) -> str:
    """A stable key for one provider configuration (option order does not matter)."""
    return kind + ":" + json.dumps(spec.model_dump(mode="json"), sort_keys=True, default=str)


@dataclass
class RunContext:
    """Shared state of one run. Thread-safe: protocol code calls it from worker threads."""

    config: RunConfig
    store: RunStore
    seed: int = 0
    console: Console = field(default_factory=lambda: Console(stderr=True))
    suite: SuiteInfo | None = None
    protocol: EvaluationProtocol[RunContext] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # a provider that failed to load is kept as its error, raised again on every request
    _providers: dict[str, Provider | VoxevalError] = field(default_factory=dict, repr=False)
    _cached_providers: dict[str, Provider] = field(default_factory=dict, repr=False)
    _provider_locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _systems: dict[str, SystemUnderTest] = field(default_factory=dict, repr=False)
    _limits: dict[str, threading.BoundedSemaphore] = field(default_factory=dict, repr=False)
    _optional: dict[str, tuple[Provider | None, str | None]] = field(
        default_factory=dict, repr=False
    )
    _call_cache: ProviderCache | None = field(default=None, repr=False)
    _call_cache_ready: bool = field(default=False, repr=False)
    # Set by the runner while units run on its event loop (``execute_units`` with units
    # prepared ahead): a unit holds one of these ``concurrency`` slots only while it commits
    # its start and waits on its system, so units reading their input or storing their reply
    # do not keep the system idle. None: the runner's workers are the only limit.
    system_call_slots: asyncio.Semaphore | None = field(default=None, repr=False)

    # -- end of the run ---------------------------------------------------------------------

    def close(self) -> None:
        """Let go of what this run loaded: its providers (embedded ASR, MOS, TTS and LLM
        models), its systems, the call cache and the protocol's own scoring resources. The
        protocol's resources refer back to this context, so without this the models lived
        on in reference cycles until Python's collector found them (about 2 GB per
        single-turn run for a library user running several runs in one process). Nothing is
        closed: a provider may share connection pools with other runs of the process; it is
        only no longer referenced. The context can be used again: providers load anew."""
        if self.protocol is not None:
            self.protocol.release()
        with self._lock:
            self._providers.clear()
            self._cached_providers.clear()
            self._provider_locks.clear()
            self._systems.clear()
            self._limits.clear()
            self._optional.clear()
            self._call_cache = None
            self._call_cache_ready = False

    def __enter__(self) -> RunContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- providers --------------------------------------------------------------------------

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._provider_locks.setdefault(key, threading.Lock())

    @overload
    def provider(self, kind: Literal["asr"], spec: SpecLike, *, cache: bool = True) -> ASR: ...
    @overload
    def provider(self, kind: Literal["tts"], spec: SpecLike, *, cache: bool = True) -> TTS: ...
    @overload
    def provider(self, kind: Literal["llm"], spec: SpecLike, *, cache: bool = True) -> LLM: ...
    @overload
    def provider(
        self, kind: Literal["audio_llm"], spec: SpecLike, *, cache: bool = True
    ) -> AudioLLM: ...
    @overload
    def provider(self, kind: Literal["mos"], spec: SpecLike, *, cache: bool = True) -> MOS: ...
    @overload
    def provider(self, kind: Literal["vad"], spec: SpecLike, *, cache: bool = True) -> VAD: ...
    @overload
    def provider(self, kind: str, spec: SpecLike, *, cache: bool = True) -> Provider: ...
    def provider(self, kind: str, spec: SpecLike, *, cache: bool = True) -> Provider:
        """One shared instance per (kind, canonical spec); its identity is added to the run's
        provenance. A provider that failed to load fails the same way on every later request
        (without retrying the load).

        ``cache=True`` (rendering, scoring, judges, simulators) puts it behind the call cache
        when one is available. ``cache=False`` is for components of a system under test, which
        must never be served from a cache: every trial is a real call. Both share the same
        underlying instance, so a model is loaded once either way.
        """
        canonical = canonical_spec(spec)
        key = spec_key(kind, canonical)
        with self._key_lock(key):  # a slow model load happens once, not once per thread
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

    def request_stats(self) -> dict[str, dict[str, float]]:
        """HTTP requests, retries and timeouts so far of every remote provider this run
        created (cached or not) and of every system with its own endpoint, by
        ``kind:provider`` (or ``system:NAME``) label. Cache hits send nothing and count 0."""
        with self._lock:
            providers = [
                (key, p) for key, p in self._providers.items() if not isinstance(p, BaseException)
            ]
            systems = list(self._systems.items())
        totals: dict[str, dict[str, float]] = {}
        for key, instance in providers + systems:
            stats = getattr(instance, "stats", None)
            if not callable(stats):
                continue
            label = _stats_label(key, instance)
            bucket = totals.setdefault(label, dict.fromkeys(REQUEST_COUNTERS, 0.0))
            for name, value in stats().items():
                if name in REQUEST_COUNTERS:
                    bucket[name] = bucket.get(name, 0) + value
        return totals

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
        ident = getattr(instance, "identity", None)
        identity = ident() if callable(ident) else {}
        self.store.recorder.add_model_identity(kind, {"provider": spec.provider, **dict(identity)})

    def require_protocol(self) -> EvaluationProtocol[RunContext]:
        """The protocol of the run (``protocol``); an error for a context built without one."""
        if self.protocol is None:
            raise RuntimeError("this run context has no protocol (runner.open_context sets it)")
        return self.protocol

    # -- systems ----------------------------------------------------------------------------

    def system(self, name: str) -> SystemUnderTest:
        """The system under test named ``name`` in the config, built once."""
        key = f"system:{name}"
        with self._key_lock(key):
            if key not in self._systems:
                instance = build_system(self.config.system(name), self)
                self._systems[key] = instance
                identity = {"name": name, **dict(instance.identity())}
                self.store.recorder.add_model_identity("system", identity)
            return self._systems[key]

    def turn_system(self, name: str) -> TurnSystem:
        """The system ``name`` as a turn system (``reply(history)``); the plan check refuses
        a run whose systems lack the capability, so a failure here is a bug."""
        system = self.system(name)
        if not isinstance(system, TurnSystem):
            raise ConfigError(f"system {name!r} cannot reply to a turn (no reply(history))")
        return system

    # -- judges -----------------------------------------------------------------------------

    def _optional_provider(
        self, slot: str, kind: str, spec: ProviderSpec | None, missing: str
    ) -> tuple[Provider | None, str | None]:
        with self._lock:
            if slot in self._optional:
                return self._optional[slot]
        refusal = judge_refusal(kind, spec) if slot in ("judge", "audio_judge") else None
        if spec is None:
            result: tuple[Provider | None, str | None] = (None, missing)
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

    def judge(self) -> LLM | None:
        """The text LLM judge from ``config.judge``, or None (see ``judge_unavailable_reason``)."""
        found = self._optional_provider("judge", "llm", self.config.judge, NO_JUDGE_REASON)[0]
        return cast(LLM | None, found)  # made by the "llm" factory

    def judge_unavailable_reason(self) -> str | None:
        return self._optional_provider("judge", "llm", self.config.judge, NO_JUDGE_REASON)[1]

    def audio_judge(self) -> AudioLLM | None:
        """The audio-capable judge from ``config.audio_judge``, or None."""
        found = self._optional_provider(
            "audio_judge", "audio_llm", self.config.audio_judge, NO_AUDIO_JUDGE_REASON
        )[0]
        return cast(AudioLLM | None, found)  # made by the "audio_llm" factory

    def audio_judge_unavailable_reason(self) -> str | None:
        return self._optional_provider(
            "audio_judge", "audio_llm", self.config.audio_judge, NO_AUDIO_JUDGE_REASON
        )[1]

    async def commit_start(self, unit: WorkUnit) -> None:
        """Mark ``unit`` running and count the attempt, from an asyncio task: returns once
        that is committed (the commit is shared with other units' writes, and awaited
        without holding a thread). A unit calls its system only after this."""
        if not self.store.recorder.waits_for_commit:  # a worker's journal: no commit to wait for
            self.store.recorder.start(unit)
            return
        started = await asyncio.to_thread(self.store.recorder.start_later, unit)
        await await_future(started)

    # -- determinism and limits -------------------------------------------------------------

    def rng(self, *keys: Any) -> np.random.Generator:
        """A generator that depends only on the run seed and ``keys`` (e.g. item id, trial),
        so results do not change with concurrency or the order units run in."""
        digest = hashlib.sha256(repr(keys).encode("utf-8")).digest()
        return np.random.default_rng([self.seed, int.from_bytes(digest[:8], "little")])

    def concurrency_limit(self, key: str, limit: int | None = None) -> threading.BoundedSemaphore:
        """A semaphore shared by every caller using ``key`` (e.g. ``"llm:" + base_url``);
        ``limit`` is fixed by the first caller (default: the run's concurrency)."""
        with self._lock:
            if key not in self._limits:
                size = max(1, int(limit or self.config.concurrency))
                self._limits[key] = threading.BoundedSemaphore(size)
            return self._limits[key]

    @contextmanager
    def limited(self, key: str, limit: int | None = None) -> Iterator[None]:
        """``with ctx.limited("asr:whisper", 1): ...`` runs at most ``limit`` blocks at once."""
        with self.concurrency_limit(key, limit):
            yield
