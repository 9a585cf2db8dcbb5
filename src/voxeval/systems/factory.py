"""Building systems under test from config, checking what they can serve, and opening live
call sessions: the one way every protocol gets a system.

One spelling per system: the type names its registered class. The spellings voxeval 0.1 still
read (``type: agent`` with ``agent: NAME``, and the type ``openai_audio``) are refused with
what to write instead (``removed_spelling``; docs/systems.md, "Moving from 0.1"), never
rewritten behind the user's back."""

from __future__ import annotations

from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.registry import names
from voxeval.systems.base import (
    CALL,
    CAPABILITY_TEXT,
    SYSTEMS,
    OpensCalls,
    SystemContext,
    SystemUnderTest,
    TurnSystem,
    capabilities_of,
)
from voxeval.systems.call import CallAgent
from voxeval.systems.turn_call import TurnSystemCall

# Type names voxeval 0.1 accepted and no longer does: old name -> the name to write.
RENAMED_TYPES = {"openai_audio": "openai-audio"}
_FORMER_AGENT_TYPE = "agent"  # 0.1: ``type: agent, agent: NAME`` for call agents
MIGRATION = "removed after voxeval 0.1; docs/systems.md, 'Moving from 0.1'"


def removed_spelling(spec: SystemSpec) -> str | None:
    """Why ``spec`` is refused and exactly what to write instead, when it uses a spelling
    voxeval 0.1 accepted (None for a current spec)."""
    where = f"system {spec.name!r}"
    if spec.type in RENAMED_TYPES:
        return (
            f"{where}: 'type: {spec.type}' is no longer accepted; write "
            f"'type: {RENAMED_TYPES[spec.type]}' ({MIGRATION})"
        )
    if spec.type != _FORMER_AGENT_TYPE:
        return None
    agent = spec.options().get("agent")
    if isinstance(agent, str):
        return (
            f"{where}: 'type: agent, agent: {agent}' is no longer accepted; write "
            f"'type: {agent}' and drop 'agent' ({MIGRATION})"
        )
    return (
        f"{where}: 'type: agent' is no longer accepted; write the system's type in 'type' "
        f"(one of {', '.join(names('system'))}; {MIGRATION})"
    )


def current_spelling(spec: SystemSpec) -> SystemSpec:
    """``spec`` as voxeval writes it now: for reading a run written by 0.1 (its run.yaml keeps
    the config as it was run), never for a new config, which ``removed_spelling`` refuses."""
    if spec.type in RENAMED_TYPES:
        return SystemSpec(name=spec.name, type=RENAMED_TYPES[spec.type], **spec.options())
    options = spec.options()
    agent = options.pop("agent", None)
    if spec.type == _FORMER_AGENT_TYPE and isinstance(agent, str):
        return SystemSpec(name=spec.name, type=agent, **options)
    return spec


def system_class(spec: SystemSpec) -> type[SystemUnderTest]:
    """The registered class for ``spec``'s type; a removed spelling is a ``ConfigError``
    saying what to write instead."""
    if (refusal := removed_spelling(spec)) is not None:
        raise ConfigError(refusal)
    return SYSTEMS.lookup(spec.type)


def build_system(spec: SystemSpec, ctx: SystemContext | None = None) -> SystemUnderTest:
    """The system for ``spec``, built by its class's ``from_spec`` (options validated there)."""
    return system_class(spec).from_spec(spec, ctx)


def missing_capability(spec: SystemSpec, protocol: str, need: str | None) -> str | None:
    """Why the system ``spec`` names cannot serve ``protocol``, which needs the capability
    ``need`` (None when it can, or when the protocol asks for none). Looks at the class only:
    nothing is built."""
    if need is None:
        return None
    try:
        cls = system_class(spec)
    except (UnknownComponent, ConfigError):
        return None  # an unknown type or a removed spelling: reported as such elsewhere
    if need in capabilities_of(cls):
        return None
    offers = sorted(capabilities_of(cls))
    offered = "; it offers " + ", ".join(CAPABILITY_TEXT[c] for c in offers) if offers else ""
    return (
        f"system {spec.name!r} (type {spec.type}) cannot serve the {protocol} "
        f"protocol: it lacks {CAPABILITY_TEXT[need]}{offered}"
    )


def open_call(system: SystemUnderTest) -> CallAgent:
    """A fresh call session: the system's own ``open_call()``, else a turn system in the
    adapter. A system that can do neither is refused, naming it."""
    if isinstance(system, OpensCalls):
        return system.open_call()
    if CALL in capabilities_of(type(system)) and isinstance(system, TurnSystem):
        return TurnSystemCall(system)
    raise ConfigError(f"system {system.name!r} cannot hold a live call")
