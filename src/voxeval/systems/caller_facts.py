"""What the caller has said of its facts (``user_goal.information_required``): the listening
reference agent uses a fact in a tool call only once it has heard it.

A fact counts as heard when the caller's words carry it in a spoken form (compact forms of
``benchmarks.entity_forms``: "F Y 2, 9 K 3 M" is ``FY2-9K3M``, "March 3rd 1988" is
``1988-03-03``). Names (facts without digits) may also be heard approximately (a fuzzy match of
the compact forms, ``NAME_SIMILARITY``): a human agent finds "Okonkwo Price" when the caller
spells it slightly differently, but never an ID it was not given."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rapidfuzz import fuzz

from voxeval.benchmarks.entity_forms import entity_key, entity_variants
from voxeval.json_types import JSONReadObject, JSONReadValue

NAME_SIMILARITY = 90  # rapidfuzz partial_ratio, 0-100, for facts without digits
MIN_KEY_CHARS = 3  # shorter facts ("2", "no") are too common to tell whether they were said


class CallerFacts:
    """The caller's facts (label -> value) and the words heard from it so far."""

    def __init__(self, facts: JSONReadObject) -> None:
        self.facts = {
            label: str(value)
            for label, value in facts.items()
            if isinstance(value, str | int | float) and not isinstance(value, bool)
        }
        self._heard = ""

    def hear(self, text: str) -> None:
        self._heard += " " + text

    def heard(self, label: str) -> bool:
        """Whether the caller's words so far carry the fact ``label``."""
        value = self.facts[label]
        heard = entity_key(self._heard)
        if any(v and v in heard for v in entity_variants(value)):
            return True
        key = entity_key(value)
        if any(c.isdigit() for c in key) or not key or len(heard) < len(key):
            return False
        return fuzz.partial_ratio(key, heard) >= NAME_SIMILARITY

    def heard_labels(self) -> set[str]:
        return {label for label in self.facts if self.heard(label)}

    def new_since(self, before: set[str]) -> list[tuple[str, str]]:
        """(label, value) of the facts heard now that were not in ``before``."""
        return [(k, v) for k, v in self.facts.items() if k not in before and self.heard(k)]

    def needed_by(self, arguments: JSONReadValue) -> list[str]:
        """Labels of the facts that ``arguments`` (a tool call's, nested values included) use."""
        keys = {entity_key(str(v)) for v in _leaves(arguments)}
        return [
            label
            for label, value in self.facts.items()
            if len(entity_key(value)) >= MIN_KEY_CHARS and entity_key(value) in keys
        ]

    def unheard(self, calls: Iterable[JSONReadValue]) -> list[str]:
        """Labels of facts that the tool calls' arguments need and the caller has not said,
        in the order of the scenario's facts."""
        needed: list[str] = []
        for arguments in calls:
            needed += [label for label in self.needed_by(arguments) if label not in needed]
        order = list(self.facts)
        return sorted((n for n in needed if not self.heard(n)), key=order.index)


def _leaves(value: JSONReadValue) -> Iterable[str | int | float]:
    """Every plain value inside ``value``."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield value
