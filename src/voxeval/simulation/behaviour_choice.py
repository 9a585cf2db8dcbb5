"""Which caller behaviour a call uses (``simulation.behaviour``) and how it is built.

* ``rules``: ``RuleBehaviour``, drawn from the persona's rates with the call's seed; free.
* ``llm``: ``LLMBehaviour``, the caller's LLM decides backchannels and barge-ins for each agent
  utterance of 2 s or more (one extra chat call each), the rules fill in when it fails.
* ``none``: no backchannels, no barge-ins, pauses only at the caller's own "..." markers
  (each the persona's median pause).
* ``auto`` (default): the caller's own default, its first entry in ``behaviour_kinds`` —
  ``llm`` for the LLM caller, ``rules`` for the scripted caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.base import LLM, Message
from voxeval.simulation.caller_behaviour import CallerBehaviour, ScheduledBehaviour
from voxeval.simulation.llm_behaviour import LLMBehaviour
from voxeval.simulation.parties import Caller
from voxeval.simulation.personas import Persona
from voxeval.simulation.rule_behaviour import RuleBehaviour

BehaviourKind = Literal["auto", "rules", "llm", "none"]
BEHAVIOUR_KINDS: tuple[str, ...] = ("auto", "rules", "llm", "none")


def resolve_kind(kind: str, supported: Sequence[str], caller: str) -> str:
    """``kind`` with ``auto`` replaced by the caller's default; ConfigError if the caller
    cannot use it."""
    if kind not in BEHAVIOUR_KINDS:
        raise ConfigError(
            f"simulation.behaviour: {kind!r} is not one of {', '.join(BEHAVIOUR_KINDS)}"
        )
    if kind == "auto":
        return supported[0] if supported else "none"
    if kind not in supported and kind != "none":
        raise ConfigError(
            f"simulation.behaviour: the {caller!r} caller supports "
            f"{', '.join(supported) or 'none'}, not {kind!r}"
        )
    return kind


def build_behaviour(
    kind: str,
    *,
    persona: Persona,
    language: str,
    seed: int,
    llm: LLM | None = None,
    conversation: Callable[[], Sequence[Message]] = list,
) -> CallerBehaviour:
    """The behaviour of one call (``kind`` already resolved, not ``auto``)."""
    if kind == "none":
        return ScheduledBehaviour(pause_s=persona.pause_median_s)
    rules = RuleBehaviour(persona, language, seed)
    if kind == "rules":
        return rules
    if kind == "llm":
        if llm is None:
            raise ConfigError("simulation.behaviour: 'llm' needs the caller's LLM")
        return LLMBehaviour(llm, rules, conversation=conversation, seed=seed)
    raise ConfigError(f"simulation.behaviour: {kind!r} is not one of rules, llm, none")


def behaviour_record(caller: Caller) -> JSONObject | None:
    """What ``call.json`` keeps about the caller's behaviour: its kind and, for the LLM
    behaviour, its counts (decisions, calls, parse failures, fallbacks). None without one."""
    behaviour = caller.behaviour
    if behaviour is None:
        return None
    record: JSONObject = {"kind": caller.behaviour_kind or type(behaviour).__name__}
    stats = behaviour.stats
    if stats is not None:
        record.update(stats.as_dict())
    return record
