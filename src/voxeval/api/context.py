"""What a protocol sees while it runs: the config, the store, shared providers and systems,
the judge, deterministic random streams and per-provider concurrency limits."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal, Protocol, cast, overload, runtime_checkable

import numpy as np
from rich.console import Console

from voxeval.api.protocol import EvaluationProtocol
from voxeval.api.provider_pool import (
    ProviderPool,
    ProviderSpecLike,
    canonical_spec,
    judge_refusal,
    spec_key,
)
from voxeval.api.work_unit import WorkUnit
from voxeval.benchmarks.suite_info import SuiteInfo
from voxeval.config import RunConfig
from voxeval.errors import ConfigError
from voxeval.providers.base import ASR, LLM, MOS, TTS, VAD, AudioLLM, Provider
from voxeval.providers.runtime.async_dispatch import await_future
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

# What a random stream is keyed by: item ids, system names, trial and attempt numbers, a
# condition (None for none); ``rng`` hashes their repr, so the keys' types are part of the key.
RngKey = str | int | None

__all__ = [
    "NO_AUDIO_JUDGE_REASON",
    "NO_JUDGE_REASON",
    "REQUEST_COUNTERS",
    "RunContext",
    "canonical_spec",
    "judge_refusal",
    "spec_key",
]


def _stats_label(key: str, provider: Provider) -> str:
    """``llm:openai`` for a provider key ``llm:{json spec}``."""
    return f"{key.partition(':')[0]}:{provider.name}"


@runtime_checkable
class _CountsRequests(Protocol):
    """A system with its own endpoint, counting the HTTP requests it sent (``HTTPSystem``)."""

    def stats(self) -> dict[str, float]: ...


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
    # the providers this run loaded (and the judges' slots): see ``api.provider_pool``
    _models: ProviderPool = field(init=False, repr=False)
    _systems: dict[str, SystemUnderTest] = field(default_factory=dict, repr=False)
    _limits: dict[str, threading.BoundedSemaphore] = field(default_factory=dict, repr=False)
    # Set by the runner while units run on its event loop (``execute_units`` with units
    # prepared ahead): a unit holds one of these ``concurrency`` slots only while it commits
    # its start and waits on its system, so units reading their input or storing their reply
    # do not keep the system idle. None: the runner's workers are the only limit.
    system_call_slots: asyncio.Semaphore | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._models = ProviderPool(self.config, self.store)

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
        self._models.clear()
        with self._lock:
            self._systems.clear()
            self._limits.clear()

    def __enter__(self) -> RunContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- providers --------------------------------------------------------------------------

    @overload
    def provider(
        self, kind: Literal["asr"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> ASR: ...
    @overload
    def provider(
        self, kind: Literal["tts"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> TTS: ...
    @overload
    def provider(
        self, kind: Literal["llm"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> LLM: ...
    @overload
    def provider(
        self, kind: Literal["audio_llm"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> AudioLLM: ...
    @overload
    def provider(
        self, kind: Literal["mos"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> MOS: ...
    @overload
    def provider(
        self, kind: Literal["vad"], spec: ProviderSpecLike, *, cache: bool = True
    ) -> VAD: ...
    @overload
    def provider(self, kind: str, spec: ProviderSpecLike, *, cache: bool = True) -> Provider: ...
    def provider(self, kind: str, spec: ProviderSpecLike, *, cache: bool = True) -> Provider:
        """One shared instance per (kind, canonical spec); its identity is added to the run's
        provenance. A provider that failed to load fails the same way on every later request
        (without retrying the load).

        ``cache=True`` (rendering, scoring, judges, simulators) puts it behind the call cache
        when one is available. ``cache=False`` is for components of a system under test, which
        must never be served from a cache: every trial is a real call. Both share the same
        underlying instance, so a model is loaded once either way.
        """
        return self._models.provider(kind, spec, cache=cache)

    def request_stats(self) -> dict[str, dict[str, float]]:
        """HTTP requests, retries and timeouts so far of every remote provider this run
        created (cached or not) and of every system with its own endpoint, by
        ``kind:provider`` (or ``system:NAME``) label. Cache hits send nothing and count 0."""
        counted: list[tuple[str, dict[str, float]]] = []
        for key, provider in self._models.loaded():
            stats = provider.stats()
            if stats is not None:  # None: an embedded model, which sends no requests
                counted.append((_stats_label(key, provider), stats))
        with self._lock:
            systems = list(self._systems.items())
        counted += [(k, s.stats()) for k, s in systems if isinstance(s, _CountsRequests)]
        totals: dict[str, dict[str, float]] = {}
        for label, stats in counted:
            bucket = totals.setdefault(label, dict.fromkeys(REQUEST_COUNTERS, 0.0))
            for name, value in stats.items():
                if name in REQUEST_COUNTERS:
                    bucket[name] = bucket.get(name, 0) + value
        return totals

    def require_protocol(self) -> EvaluationProtocol[RunContext]:
        """The protocol of the run (``protocol``); an error for a context built without one."""
        if self.protocol is None:
            raise RuntimeError("this run context has no protocol (runner.open_context sets it)")
        return self.protocol

    # -- systems ----------------------------------------------------------------------------

    def system(self, name: str) -> SystemUnderTest:
        """The system under test named ``name`` in the config, built once."""
        key = f"system:{name}"
        with self._models.key_lock(key):
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

    def judge(self) -> LLM | None:
        """The text LLM judge from ``config.judge``, or None (see ``judge_unavailable_reason``)."""
        found = self._models.optional("judge", "llm", self.config.judge, NO_JUDGE_REASON)[0]
        return cast(LLM | None, found)  # made by the "llm" factory

    def judge_unavailable_reason(self) -> str | None:
        return self._models.optional("judge", "llm", self.config.judge, NO_JUDGE_REASON)[1]

    def audio_judge(self) -> AudioLLM | None:
        """The audio-capable judge from ``config.audio_judge``, or None."""
        found = self._models.optional(
            "audio_judge", "audio_llm", self.config.audio_judge, NO_AUDIO_JUDGE_REASON
        )[0]
        return cast(AudioLLM | None, found)  # made by the "audio_llm" factory

    def audio_judge_unavailable_reason(self) -> str | None:
        return self._models.optional(
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

    def rng(self, *keys: RngKey) -> np.random.Generator:
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
