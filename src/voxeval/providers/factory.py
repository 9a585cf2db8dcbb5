"""Create providers by name from a config mapping ``{provider: NAME, **options}``."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import Availability
from voxeval.providers.cache import ProviderCache, cached, default_cache
from voxeval.registry import lookup

PROVIDER_KINDS = ("asr", "tts", "llm", "audio_llm", "mos", "vad")


def availability(kind: str, spec: ProviderSpec) -> Availability:
    cls = lookup(kind, spec.provider)
    check = getattr(cls, "availability", None)
    if check is None:
        return Availability(True)
    result: Availability = check(**spec.options())
    return result


def create_provider(
    kind: str,
    spec: ProviderSpec | dict[str, Any] | str,
    *,
    cache: ProviderCache | Literal["default"] | None = None,
) -> Any:
    """Instantiate the ``kind`` provider described by ``spec`` (a name is enough for defaults).

    With ``cache`` (a ``ProviderCache``, or "default" for the shared one) the provider is
    wrapped so repeated calls are answered from disk. Raises ``ProviderUnavailable`` with the
    provider's own reason when it cannot run here.
    """
    provider = _instantiate(kind, spec)
    if cache is None:
        return provider

    return cached(kind, provider, default_cache() if cache == "default" else cache)


class ProviderSource(Protocol):
    """Where shared providers come from during a run (``voxeval.protocols.context.RunContext``)."""

    def provider(
        self, kind: str, spec: ProviderSpec | dict[str, Any] | str, *, cache: bool = True
    ) -> Any: ...


def system_component(
    source: ProviderSource | None, kind: str, spec: ProviderSpec | dict[str, Any] | str | None
) -> Any:
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


def harness_provider(
    source: ProviderSource | None, kind: str, spec: ProviderSpec | dict[str, Any] | str
) -> Any:
    """A provider on voxeval's own side (caller simulator, scoring): shared and behind the
    call cache through the run context; created uncached without one."""
    if source is None:
        return create_provider(kind, spec)
    return source.provider(kind, spec)


def _instantiate(kind: str, spec: ProviderSpec | dict[str, Any] | str) -> Any:
    if isinstance(spec, str):
        spec = ProviderSpec(provider=spec)
    elif isinstance(spec, dict):
        if "provider" not in spec:
            raise ConfigError(f"{kind} provider config needs a 'provider' field, got {spec!r}")
        spec = ProviderSpec(**spec)
    cls = lookup(kind, spec.provider)
    avail = availability(kind, spec)
    if not avail.available:
        raise ProviderUnavailable(
            f"{kind} provider {spec.provider!r} is unavailable: {avail.reason}"
        )
    try:
        return cls(**spec.options())
    except TypeError as exc:
        raise ConfigError(f"{kind} provider {spec.provider!r}: bad options ({exc})") from exc
