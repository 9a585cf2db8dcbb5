"""Location names of an EVA-Bench release (``data/<domain>_aliases/*.json``), resolved as the
reference resolves them.

An alias file holds one place: ``{"name": "Headquarters", "base": ["hq", ...],
"translations": {"es": ["sede central", ...], ...}}``. The reference uses it twice:

- ``<LOC:Name>`` tokens in a record's user goal and opening line become the name in English
  (and in any language without a translation) and the first translation otherwise; an unknown
  name is left as the name itself;
- every mapping of the scenario databases (initial and expected) whose ``name`` is a known
  place gets ``name_aliases``: its base aliases plus those of the call's language, in order,
  without repeats (the released tools accept any of them for the place).

voxeval keeps one import for every language, so a ``<LOC:Name>`` token becomes an ordinary
placeholder, ``<LOC_NAME>``, whose value per language is stored with the other per-language
values (``culture_overrides[lang].loc``; see benchmarks/eva/placeholders.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from voxeval.json_types import JSONObject, JSONValue

LOC_TOKEN = re.compile(r"<LOC:([^>]+)>")
OVERRIDE_KEY = "loc"  # culture_overrides[lang].loc.<SLUG> -> the <LOC_SLUG> placeholder
ALIASES_FIELD = "name_aliases"


class AliasFileError(ValueError):
    """An alias file that cannot be read; the message names the file and field."""


def load_alias_index(folder: Path) -> dict[str, JSONObject]:
    """Place name -> its alias entry, from every ``*.json`` in ``folder`` ({} without one)."""
    if not folder.is_dir():
        return {}
    index: dict[str, JSONObject] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise AliasFileError(f"{path}: invalid JSON ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise AliasFileError(f"{path}: name: missing or not text")
        index[data["name"]] = data
    return index


def is_english(language: str) -> bool:
    return not language or language.lower() in ("en", "english")


def spoken_name(name: str, index: Mapping[str, JSONObject], language: str) -> str:
    """How ``<LOC:name>`` reads in ``language`` (the reference's rule)."""
    entry = index.get(name)
    if entry is None or is_english(language):
        return name
    translations = _translations(entry, language)
    return str(translations[0]) if translations else name


def _translations(entry: JSONObject, language: str) -> list[JSONValue]:
    """The aliases of a place in ``language`` ([] when the alias file lists none)."""
    translations = entry.get("translations")
    found = translations.get(language) if isinstance(translations, dict) else None
    return found if isinstance(found, list) else []


def slug(name: str) -> str:
    """The placeholder name of a place: ``Garage A`` -> ``GARAGE_A``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "PLACE"


@dataclass
class LocationTokens:
    """What rewriting a record's ``<LOC:...>`` tokens found."""

    names: dict[str, str] = field(default_factory=dict)  # slug -> place name
    unknown: set[str] = field(default_factory=set)  # names with no alias file

    def rewrite(self, value: JSONValue) -> JSONValue:
        """``value`` with every ``<LOC:Name>`` replaced by ``<LOC_SLUG>`` (recorded here)."""
        if isinstance(value, str):
            return LOC_TOKEN.sub(self._swap, value)
        if isinstance(value, list):
            return [self.rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: self.rewrite(v) for k, v in value.items()}
        return value

    def _swap(self, match: re.Match[str]) -> str:
        name = match.group(1)
        key = slug(name)
        if self.names.setdefault(key, name) != name:
            raise AliasFileError(
                f"<LOC:{name}> and <LOC:{self.names[key]}> both become <LOC_{key}>"
            )
        return f"<{OVERRIDE_KEY.upper()}_{key}>"

    def overrides(
        self, culture_overrides: Mapping[str, JSONValue], index: Mapping[str, JSONObject]
    ) -> JSONObject:
        """``culture_overrides`` with each language's spoken form of every found place."""
        out = dict(culture_overrides)
        for language, entry in culture_overrides.items():
            if not isinstance(entry, Mapping) or not self.names:
                continue
            places: JSONObject = {k: spoken_name(n, index, language) for k, n in self.names.items()}
            out[language] = {**entry, OVERRIDE_KEY: places}
        return out


def with_name_aliases(db: JSONValue, index: Mapping[str, JSONObject], language: str) -> JSONValue:
    """A copy of ``db`` where every mapping whose ``name`` is a known place carries
    ``name_aliases`` for ``language`` (base aliases, then the language's, without repeats)."""
    if isinstance(db, list):
        return [with_name_aliases(v, index, language) for v in db]
    if not isinstance(db, dict):
        return db
    out = {k: with_name_aliases(v, index, language) for k, v in db.items()}
    name = db.get("name")
    if isinstance(name, str) and name in index:
        entry = index[name]
        base = entry.get("base")
        aliases = [*(base if isinstance(base, list) else []), *_translations(entry, language)]
        out[ALIASES_FIELD] = list(dict.fromkeys(aliases))
    return out
