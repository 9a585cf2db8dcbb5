"""The entities a speech-to-speech agent may repeat in a turn, with where they came from.

A speech-to-speech system exposes no text of what it meant to say, so its speech fidelity is
checked on the entities it had been given: those the caller said (the caller's intended text;
the agent heard that audio itself) and those its tools returned, up to the end of the turn.

Entities of a text are ``extract_entities`` (scenario key entities, dates, amounts, phone
numbers, codes). A tool result is walked as JSON: every text or number in it goes through the
same rule, and a short text under a key naming a name (``name``, ``last_name``,
``doctor_name`` ...) is taken whole, since names are otherwise found only among the scenario's
key entities. Tool-call arguments are not sources (the agent chose them itself)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from voxeval.json_types import JSONReadValue
from voxeval.scoring.text.spoken_entities import extract_entities
from voxeval.simulation.timeline import Timeline

_NAME_MAX_WORDS = 5  # a longer text under a "name" key is a description, not a name


@dataclass(frozen=True)
class SourcedEntity:
    value: str
    source: str  # e.g. "caller turn 0", "tool lookup_member (agent turn 1)"


def _leaves(value: JSONReadValue, key: str = "") -> Iterator[tuple[str, JSONReadValue]]:
    """(key, leaf) pairs of a JSON value, the key being the nearest mapping key."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item, key)
    elif value is not None and not isinstance(value, bool):
        yield key, value


def tool_result_entities(
    result: JSONReadValue, known: Mapping[str, str] | None = None
) -> list[str]:
    """The entities in one tool result, in order, each once (see the module docstring)."""
    found: list[str] = []
    for key, leaf in _leaves(result):
        text = str(leaf).strip()
        if not text:
            continue
        names = [text] if _is_name_key(key) and len(text.split()) <= _NAME_MAX_WORDS else []
        for entity in names or extract_entities(text, known):
            if entity not in found:
                found.append(entity)
    return found


def _is_name_key(key: str) -> bool:
    return key.lower().endswith("name")  # name, last_name, doctorName ...


def entities_given_by(
    timeline: Timeline, agent_turn: int, until: float, known: Mapping[str, str] | None = None
) -> list[SourcedEntity]:
    """Entities the caller said before ``until`` and tools returned in agent turns up to
    ``agent_turn``, each value once (its first source)."""
    sourced: list[tuple[float, SourcedEntity]] = []
    for seg in timeline.speech("user"):
        if seg.start < until and seg.intended_text.strip():
            label = f"caller turn {seg.turn}"
            sourced += [
                (seg.start, SourcedEntity(e, label))
                for e in extract_entities(seg.intended_text, known)
            ]
    for tool in timeline.tools:
        if tool.turn <= agent_turn:
            label = f"tool {tool.name} (agent turn {tool.turn})"
            sourced += [
                (tool.t, SourcedEntity(e, label)) for e in tool_result_entities(tool.result, known)
            ]
    sourced.sort(key=lambda item: item[0])
    seen: set[str] = set()
    unique: list[SourcedEntity] = []
    for _, entity in sourced:
        if entity.value not in seen:
            seen.add(entity.value)
            unique.append(entity)
    return unique
