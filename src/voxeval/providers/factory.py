"""Create providers by name from a config mapping ``{provider: NAME, **options}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import Availability
from voxeval.registry import lookup

if TYPE_CHECKING:
    from voxeval.providers.cache import ProviderCache

PROVIDER_KINDS = ("asr", "tts", "llm", "audio_llm", "mos", "vad")


class ProviderSpec(BaseModel):
    """``{provider: NAME, ...options}``; options go to the provider's constructor.

    Secrets are never options: remote providers take ``api_key_env`` (the name of an
    environment variable) instead of a key.
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    provider: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


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
    from voxeval.providers.cache import cached, default_cache

    return cached(kind, provider, default_cache() if cache == "default" else cache)


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
