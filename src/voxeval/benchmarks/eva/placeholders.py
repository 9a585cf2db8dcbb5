"""Per-language placeholder resolution for scenarios (names, phone numbers, ...).

Scenario text and databases may hold tokens such as ``<FIRST_NAME>``, ``<LAST_NAME>``,
``<LAST_NAME_ROMANIZED>`` or ``<PHONE>``. Their values live per language in two maps, the
layout EVA-Bench releases use::

    culture_overrides:            {es: {first_name: Lucía, last_name: Núñez, phone: "+34 ..."}}
    romanized_culture_overrides:  {es: {first_name: Lucia, last_name: Nunez}}

Every string value of a language's entry names a token: key ``last_name`` -> ``<LAST_NAME>``; a
nested mapping adds its key as a prefix (``companion: {first_name: ..}`` ->
``<COMPANION_FIRST_NAME>``). The romanized entry gives the ``<..._ROMANIZED>`` tokens, written in
lower case because they serve ASCII slugs such as e-mail local parts; a language without a
romanized entry falls back to its plain names. A token that is left after resolution is an error
naming the field, so a typo never reaches a call as literal text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadValue, JSONValue

TOKEN = re.compile(r"<([A-Z][A-Z0-9_]*)>")
ROMANIZED_SUFFIX = "_ROMANIZED"


def placeholder_values(
    culture_overrides: Mapping[str, JSONReadValue],
    romanized_overrides: Mapping[str, JSONReadValue] | None,
    language: str,
    where: str = "",
) -> dict[str, str]:
    """Token name (without brackets) -> value for ``language``."""
    if language not in culture_overrides:
        available = ", ".join(sorted(culture_overrides)) or "none"
        raise ConfigError(
            f"{where}culture_overrides: no entry for language {language!r} (available: {available})"
        )
    entry = culture_overrides[language]
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}culture_overrides.{language}: expected a mapping")
    values = _flatten(entry)
    romanized_entry = (romanized_overrides or {}).get(language)
    romanized = _flatten(romanized_entry) if isinstance(romanized_entry, Mapping) else {}
    plain = dict(values)
    for name in {*plain, *romanized}:
        values.setdefault(name + ROMANIZED_SUFFIX, romanized.get(name, plain.get(name, "")).lower())
    return values


def _flatten(entry: Mapping[str, JSONReadValue], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in entry.items():
        name = f"{prefix}{str(key).upper()}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "_"))
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            out[name] = str(value)
    return out


def fill_placeholders(value: JSONValue, values: Mapping[str, str], where: str = "") -> JSONValue:
    """A copy of ``value`` (JSON-like) with every known token replaced; an unknown token left
    in a string raises :class:`ConfigError` naming the field path."""
    if isinstance(value, str):
        return _fill_text(value, values, where)
    if isinstance(value, list):
        return [fill_placeholders(v, values, f"{where}.{n}") for n, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            _fill_text(k, values, where) if isinstance(k, str) else k: fill_placeholders(
                v, values, f"{where}.{k}" if where else str(k)
            )
            for k, v in value.items()
        }
    return value


def _fill_text(text: str, values: Mapping[str, str], where: str) -> str:
    def swap(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            known = ", ".join(f"<{k}>" for k in sorted(values)) or "none"
            raise ConfigError(
                f"{where or 'value'}: placeholder <{name}> has no value for this language "
                f"(known: {known})"
            )
        return values[name]

    return TOKEN.sub(swap, text)


def has_placeholders(value: JSONReadValue) -> bool:
    """True if any string inside ``value`` holds a ``<TOKEN>``."""
    if isinstance(value, str):
        return TOKEN.search(value) is not None
    if isinstance(value, list):
        return any(has_placeholders(v) for v in value)
    if isinstance(value, dict):
        return any(has_placeholders(k) or has_placeholders(v) for k, v in value.items())
    return False
