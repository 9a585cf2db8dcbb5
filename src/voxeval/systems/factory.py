"""Building systems under test from config, checking what they can serve, and opening live
call sessions: the one way every protocol gets a system.

Legacy spellings still work for this version and are removed in the next (and the
websocket bridge's version 1, see ``systems/live/ws_bridge.py``):
``type: agent`` with ``agent: NAME`` (the configs of the former agent family) is read as
``type: NAME``, and the type ``openai_audio`` as ``openai-audio``; ``deprecation_note`` says
what to write instead (the plan check prints it with the file and field)."""

from __future__ import annotations

from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.providers.factory import ProviderSource
from voxeval.registry import names
from voxeval.systems.base import (
    CALL,
    CAPABILITY_TEXT,
    SYSTEMS,
    SystemUnderTest,
    TurnSystem,
    capabilities_of,
)
from voxeval.systems.call import CallAgent
from voxeval.systems.turn_call import TurnSystemCall

_LEGACY_TYPE = "agent"
# Old type names of registered systems (no longer registered under them).
RENAMED_TYPES = {"openai_audio": "openai-audio"}
REMOVAL = "accepted in voxeval 0.1 only"


def resolve_spec(spec: SystemSpec) -> SystemSpec:
    """``spec`` with a legacy ``type: agent, agent: NAME`` rewritten to ``type: NAME`` and a
    renamed type to its current name."""
    if spec.type in RENAMED_TYPES:
        return SystemSpec(name=spec.name, type=RENAMED_TYPES[spec.type], **spec.options())
    if spec.type != _LEGACY_TYPE:
        return spec
    options = spec.options()
    agent = options.pop("agent", None)
    if not isinstance(agent, str):
        raise ConfigError(
            f"system {spec.name!r}: 'type: agent' is gone; write the system's type in 'type' "
            f"(one of {', '.join(names('system'))})"
        )
    return SystemSpec(name=spec.name, type=agent, **options)


def deprecation_note(spec: SystemSpec) -> str | None:
    """A one-line note for a legacy spelling (None otherwise)."""
    if spec.type in RENAMED_TYPES:
        new = RENAMED_TYPES[spec.type]
        return (
            f"system {spec.name!r}: 'type: {spec.type}' is deprecated ({REMOVAL}); "
            f"write 'type: {new}'"
        )
    if spec.type == "websocket" and spec.options().get("protocol_version", 1) == 1:
        return (
            f"system {spec.name!r}: websocket bridge version 1 is deprecated ({REMOVAL}, and "
            "the default until then); set 'protocol_version: 2' with 'turn_handling: voxeval' "
            "and have the agent open with a hello (docs/websocket-bridge.md, 'Moving from "
            "version 1')"
        )
    if spec.type != _LEGACY_TYPE:
        return None
    agent = spec.options().get("agent")
    return (
        f"system {spec.name!r}: 'type: agent, agent: {agent}' is deprecated; write 'type: {agent}'"
        f" and drop 'agent' ({REMOVAL})"
    )


def system_class(spec: SystemSpec) -> type[SystemUnderTest]:
    """The registered class for ``spec``'s type (legacy specs resolved)."""
    return SYSTEMS.lookup(resolve_spec(spec).type)


def build_system(spec: SystemSpec, ctx: ProviderSource | None = None) -> SystemUnderTest:
    """The system for ``spec``, built by its class's ``from_spec`` (options validated there)."""
    resolved = resolve_spec(spec)
    return SYSTEMS.lookup(resolved.type).from_spec(resolved, ctx)


def missing_capability(spec: SystemSpec, protocol: str, need: str | None) -> str | None:
    """Why the system ``spec`` names cannot serve ``protocol``, which needs the capability
    ``need`` (None when it can, or when the protocol asks for none). Looks at the class only:
    nothing is built."""
    if need is None:
        return None
    try:
        cls = system_class(spec)
    except UnknownComponent:
        return None  # reported as an unknown type elsewhere
    if need in capabilities_of(cls):
        return None
    offers = sorted(capabilities_of(cls))
    offered = "; it offers " + ", ".join(CAPABILITY_TEXT[c] for c in offers) if offers else ""
    return (
        f"system {spec.name!r} (type {resolve_spec(spec).type}) cannot serve the {protocol} "
        f"protocol: it lacks {CAPABILITY_TEXT[need]}{offered}"
    )


def open_call(system: SystemUnderTest) -> CallAgent:
    """A fresh call session: the system's own ``open_call()``, else a turn system in the
    adapter. A system that can do neither is refused, naming it."""
    opener = getattr(system, "open_call", None)
    if callable(opener):
        session: CallAgent = opener()
        return session
    if CALL in capabilities_of(type(system)) and isinstance(system, TurnSystem):
        return TurnSystemCall(system)
    raise ConfigError(
        f"system {getattr(system, 'name', type(system).__name__)!r} cannot hold a live call"
    )
