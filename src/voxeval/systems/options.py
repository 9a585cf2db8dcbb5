"""Shared plumbing for system constructors: option validation, identities, and turning a
component's final endpoint failure into a fault of the system under test."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from voxeval.config import SystemSpec, format_validation_error
from voxeval.errors import ConfigError, EndpointError, SystemFault

M = TypeVar("M", bound=BaseModel)


def parse_options(spec: SystemSpec, model: type[M]) -> M:
    """Validate a system's options; errors name the system and the field at fault."""
    try:
        return model.model_validate(spec.options())
    except ValidationError as exc:
        where = f"system {spec.name!r} (type {spec.type})"
        raise ConfigError(format_validation_error(where, exc)) from exc


def provider_identity(provider: Any) -> dict[str, Any]:
    ident = getattr(provider, "identity", None)
    if callable(ident):
        result: dict[str, Any] = ident()
        return result
    return {"name": getattr(provider, "name", type(provider).__name__)}


# What an endpoint's last failure says about the system under test (SystemFault causes).
_FAULT_CAUSES = {
    "timeout": "timeout",
    "connection": "disconnect",
    "malformed": "malformed_output",
    "http": "exception",
}


def endpoint_fault(system: str, exc: EndpointError) -> SystemFault:
    """The system under test's fault for a component's (or its own endpoint's) final failure:
    timeouts stay timeouts, lost connections are disconnects, unusable replies malformed
    output, error statuses exceptions."""
    cause = _FAULT_CAUSES.get(exc.failure or "", "exception")
    return SystemFault(f"system {system!r}: {exc}", cause=cause)
