"""Shared plumbing for system constructors: option validation, identities, and turning a
component's final endpoint failure into a fault of the system under test."""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import BaseModel, BeforeValidator, ValidationError

from voxeval.config import ProviderSpec, SystemSpec
from voxeval.errors import ConfigError, EndpointError, SystemFault
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import Provider

M = TypeVar("M", bound=BaseModel)


def _named_provider(value: JSONValue) -> JSONValue:
    return {"provider": value} if isinstance(value, str) else value


# A component of a system: ``{provider: NAME, ...options}`` or just ``NAME``.
ComponentSpec = Annotated[ProviderSpec, BeforeValidator(_named_provider)]


def parse_options(spec: SystemSpec, model: type[M], raw: JSONObject | None = None) -> M:
    """Validate a system's options (``raw``, else the spec's); errors name the system and the
    field at fault, and an unknown option lists the options the system takes."""
    try:
        return model.model_validate(spec.options() if raw is None else raw)
    except ValidationError as exc:
        where = f"system {spec.name!r} (type {spec.type})"
        allowed = ", ".join(sorted(model.model_fields))
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "<options>"
            if err["type"] == "extra_forbidden":
                lines.append(f"{where}: {loc}: unknown option (options: {allowed})")
            else:
                lines.append(f"{where}: {loc}: {err['msg']}")
        raise ConfigError("\n".join(lines)) from exc


def provider_identity(provider: Provider) -> JSONObject:
    return provider.identity()


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
