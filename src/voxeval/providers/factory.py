"""Create providers by name from a config mapping ``{provider: NAME, **options}``."""

from __future__ import annotations

from typing import Literal, Protocol, TypeAlias, overload

from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONValue
from voxeval.providers.base import (
    ASR,
    LLM,
    MOS,
    TTS,
    VAD,
    AudioLLM,
    Availability,
    Provider,
    ProviderClass,
)
from voxeval.providers.caching.cache import ProviderCache, cached, default_cache
from voxeval.providers.usage.usage_meter import metered, model_key
from voxeval.registry import lookup

PROVIDER_KINDS = ("asr", "tts", "llm", "audio_llm", "mos", "vad")

SpecLike: TypeAlias = ProviderSpec | dict[str, JSONValue] | str
"""A provider config: a ``ProviderSpec``, its mapping ``{provider: NAME, **options}``, or a name."""
CacheChoice: TypeAlias = ProviderCache | Literal["default"] | None


def availability(kind: str, spec: ProviderSpec) -> Availability:
    """Whether the ``kind`` provider of ``spec`` can run here (its class's ``availability``)."""
    cls: ProviderClass = lookup(kind, spec.provider)
    return cls.availability(**spec.options())


@overload
def create_provider(kind: Literal["asr"], spec: SpecLike, *, cache: CacheChoice = None) -> ASR: ...
@overload
def create_provider(kind: Literal["tts"], spec: SpecLike, *, cache: CacheChoice = None) -> TTS: ...
@overload
def create_provider(kind: Literal["llm"], spec: SpecLike, *, cache: CacheChoice = None) -> LLM: ...
@overload
def create_provider(
    kind: Literal["audio_llm"], spec: SpecLike, *, cache: CacheChoice = None
) -> AudioLLM: ...
@overload
def create_provider(kind: Literal["mos"], spec: SpecLike, *, cache: CacheChoice = None) -> MOS: ...
@overload
def create_provider(kind: Literal["vad"], spec: SpecLike, *, cache: CacheChoice = None) -> VAD: ...
@overload
def create_provider(kind: str, spec: SpecLike, *, cache: CacheChoice = None) -> Provider: ...
def create_provider(kind: str, spec: SpecLike, *, cache: CacheChoice = None) -> Provider:
    """Instantiate the ``kind`` provider described by ``spec`` (a name is enough for defaults).

    With ``cache`` (a ``ProviderCache``, or "default" for the shared one) the provider is
    wrapped so repeated calls are answered from disk. Raises ``ProviderUnavailable`` with the
    provider's own reason when it cannot run here.
    """
    provider = _instantiate(kind, spec)
    if cache is None:
        return provider

    wrapped: Provider = cached(kind, provider, default_cache() if cache == "default" else cache)
    return wrapped


class ProviderSource(Protocol):
    """Where shared providers come from during a run (``voxeval.api.context.RunContext``)."""

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


@overload
def system_component(
    source: ProviderSource | None, kind: Literal["asr"], spec: SpecLike
) -> ASR: ...
@overload
def system_component(
    source: ProviderSource | None, kind: Literal["tts"], spec: SpecLike
) -> TTS: ...
@overload
def system_component(
    source: ProviderSource | None, kind: Literal["llm"], spec: SpecLike
) -> LLM: ...
@overload
def system_component(
    source: ProviderSource | None, kind: Literal["audio_llm"], spec: SpecLike
) -> AudioLLM: ...
@overload
def system_component(
    source: ProviderSource | None, kind: Literal["mos"], spec: SpecLike
) -> MOS: ...
@overload
def system_component(
    source: ProviderSource | None, kind: Literal["vad"], spec: SpecLike
) -> VAD: ...
@overload
def system_component(source: ProviderSource | None, kind: str, spec: None) -> None: ...
@overload
def system_component(
    source: ProviderSource | None, kind: str, spec: SpecLike | None
) -> Provider | None: ...
def system_component(
    source: ProviderSource | None, kind: str, spec: SpecLike | None
) -> Provider | None:
    """A provider that is part of a system under test (a cascade's ASR/LLM/TTS, an agent's
    LLM). It is never behind the call cache: a system is evaluated by calling it, so every
    trial must be a real call with a real latency. With a run context the instance is shared
    (a model loads once); without one (systems used from Python) it is created here. None
    when ``spec`` is None (an optional component that is not configured)."""
    if spec is None:
        return None
    if source is None:
        return create_provider(kind, spec)
    return source.provider(kind, spec, cache=False)


@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["asr"], spec: SpecLike
) -> ASR: ...
@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["tts"], spec: SpecLike
) -> TTS: ...
@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["llm"], spec: SpecLike
) -> LLM: ...
@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["audio_llm"], spec: SpecLike
) -> AudioLLM: ...
@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["mos"], spec: SpecLike
) -> MOS: ...
@overload
def harness_provider(
    source: ProviderSource | None, kind: Literal["vad"], spec: SpecLike
) -> VAD: ...
@overload
def harness_provider(source: ProviderSource | None, kind: str, spec: SpecLike) -> Provider: ...
def harness_provider(source: ProviderSource | None, kind: str, spec: SpecLike) -> Provider:
    """A provider on voxeval's own side (caller simulator, scoring): shared and behind the
    call cache through the run context; created uncached without one."""
    if source is None:
        return create_provider(kind, spec)
    return source.provider(kind, spec)


def _instantiate(kind: str, spec: SpecLike) -> Provider:
    if isinstance(spec, str):
        spec = ProviderSpec(provider=spec)
    elif isinstance(spec, dict):
        if "provider" not in spec:
            raise ConfigError(f"{kind} provider config needs a 'provider' field, got {spec!r}")
        spec = ProviderSpec.model_validate(spec)
    cls = lookup(kind, spec.provider)
    avail = availability(kind, spec)
    if not avail.available:
        raise ProviderUnavailable(
            f"{kind} provider {spec.provider!r} is unavailable: {avail.reason}"
        )
    try:
        provider: Provider = cls(**spec.options())
    except TypeError as exc:
        raise ConfigError(f"{kind} provider {spec.provider!r}: bad options ({exc})") from exc
    # metered (usage by model for cost accounting); a no-op pass-through outside a ledger
    wrapped: Provider = metered(kind, provider, model_key(kind, spec.provider, provider))
    return wrapped
