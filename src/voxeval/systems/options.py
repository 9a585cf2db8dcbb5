"""Shared plumbing for system constructors: option validation and provider creation."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from voxeval.config import SystemSpec, format_validation_error
from voxeval.errors import ConfigError
from voxeval.providers.factory import ProviderSpec, create_provider

M = TypeVar("M", bound=BaseModel)


def parse_options(spec: SystemSpec, model: type[M]) -> M:
    """Validate a system's options; errors name the system and the field at fault."""
    try:
        return model.model_validate(spec.options())
    except ValidationError as exc:
        where = f"system {spec.name!r} (type {spec.type})"
        raise ConfigError(format_validation_error(where, exc)) from exc


def make_provider(ctx: Any, kind: str, spec: ProviderSpec | dict[str, Any] | str) -> Any:
    """Create a provider through the run context (shared instances and call cache) when there
    is one, directly otherwise (systems used from Python without a run)."""
    if ctx is not None and hasattr(ctx, "provider"):
        return ctx.provider(kind, spec)
    return create_provider(kind, spec)


def provider_identity(provider: Any) -> dict[str, Any]:
    ident = getattr(provider, "identity", None)
    if callable(ident):
        result: dict[str, Any] = ident()
        return result
    return {"name": getattr(provider, "name", type(provider).__name__)}
