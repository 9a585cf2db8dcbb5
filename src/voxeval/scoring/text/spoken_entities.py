"""Key entities of a text and whether a transcript carries them (pure functions, no models).

Used by the offline speech-fidelity checks (``voxeval.scoring.calls.speech_fidelity``).

Extraction rule (``extract_entities``), applied to the text a party *intended* to say:

1. every known entity (the scenario's key entities: names, IDs, dates ...) that the text
   contains, in any spoken form ``entity_variants`` knows (ISO dates also as "March 5 1987");
2. patterns, left to right, each match taken once:
   - dates: an ISO date (``1987-03-05``), or a month name with a day number, either order,
     with an optional year ("March 5th, 2025", "5 March");
   - amounts: a currency sign with a number (``$45.50``), or a number followed by a currency
     word or "percent" ("120 dollars");
   - phone numbers: 7 or more digits in groups separated by spaces, dots or hyphens, with an
     optional leading ``+`` and brackets ("555-123-4567", "(555) 123 4567");
   - codes and IDs: a token of letters and digits (hyphens allowed) holding at least one
     digit and at least three characters ("KX492B7", "A-1234", "48213"), or a code spelled
     out as three or more single letters/digits separated by spaces with at least one digit
     ("K X 4 9 2 B 7").
   Numbers of one or two digits alone are not entities (counts, "2 options"). Names are
   taken only from the known entities: guessing names from capital letters would pick up
   weekdays, titles and product words, and a clean call would fail on an unknown name that
   the ASR spells differently.
3. An entity contained in a longer one (the year of a date, a code inside a known ID) is
   dropped.

Matching (``entity_spoken``): both sides are reduced to a compact key (lower case, spoken
digits and ordinals as digits, punctuation and spaces removed; ``entity_key``) from the raw
text and from the Whisper-normalised text of the call's language, so "K X four nine two",
"KX-492" and "kx 492" compare equal, as do "$45.50" and "45.50 dollars". An entity is spoken
when one of its keys occurs in one of the transcript's keys. Containment without word
boundaries is deliberate (spelled codes lose their spaces); short entities are excluded by the
rule above so a false match inside a longer number is unlikely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from voxeval.benchmarks.entity_forms import entity_key, entity_variants
from voxeval.scoring.text.text_normaliser import normaliser_for

_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+\d{4})?"
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_PATTERNS = [
    ("date", r"\b\d{4}-\d{2}-\d{2}\b"),
    ("date", rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}"),
    ("date", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}"),
    ("amount", rf"[$€£]\s?{_NUMBER}"),
    ("amount", rf"\b{_NUMBER}\s+(?:dollars?|euros?|pounds?|cents?|percent)\b"),
    ("phone", r"\+?\(?\d{2,4}\)?(?:[\s.-]\d{2,4}){2,}\b"),
    ("code", r"\b(?:[a-z0-9]\s){2,}[a-z0-9]\b"),
    ("code", r"\b[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\b"),
]
_COMPILED = [(kind, re.compile(p, re.IGNORECASE)) for kind, p in _PATTERNS]


def _is_code(text: str) -> bool:
    """A code candidate must hold a digit and three or more letters/digits."""
    compact = re.sub(r"[^0-9a-z]", "", text.lower())
    return any(c.isdigit() for c in compact) and len(compact) >= 3


def _is_phone(text: str) -> bool:
    return sum(c.isdigit() for c in text) >= 7


def known_entities_in(text: str, known: Mapping[str, str] | None) -> list[str]:
    """The values of ``known`` that ``text`` contains in a spoken form (``entity_variants``)."""
    said = entity_key(text)
    return [
        value
        for value in (known or {}).values()
        if any(k and k in said for k in entity_variants(value))
    ]


def extract_entities(text: str, known: Mapping[str, str] | None = None) -> list[str]:
    """The key entities of ``text`` by the rule in the module docstring, in order of first
    appearance, as written in the text (known entities as their value)."""
    # known entities first, ahead of any pattern
    found: list[tuple[int, str]] = [(-1, value) for value in known_entities_in(text, known)]
    taken = [False] * len(text)
    for kind, pattern in _COMPILED:
        for match in pattern.finditer(text):
            start, end = match.span()
            piece = match.group(0).strip(" ,.")
            if any(taken[start:end]):
                continue
            if kind == "code" and not _is_code(piece):
                continue
            if kind == "phone" and not _is_phone(piece):
                continue
            found.append((start, piece))
            taken[start:end] = [True] * (end - start)
    found.sort(key=lambda item: item[0])
    # one entry per entity: a pattern match that is another spoken form of an entity already
    # found (the date "May 1st, 1980" of a known 1980-05-01) is the same entity
    entities: list[tuple[str, set[str]]] = []
    for _, value in found:
        keys = {k for k in entity_variants(value) if k}
        if keys and not any(keys & seen for _, seen in entities):
            entities.append((value, keys))
    # drop an entity inside a longer one (a year inside a date, a code inside a known ID)
    return [
        value
        for value, keys in entities
        if not any(k in o and k != o for k in keys for _, other in entities for o in other)
    ]


def _keys(text: str, language: str | None) -> set[str]:
    normalise = normaliser_for(language)
    return {k for k in (entity_key(text), entity_key(normalise(text))) if k}


def entity_spoken(entity: str, transcript: str, language: str | None = None) -> bool:
    """Whether ``transcript`` carries ``entity`` (compact keys, see the module docstring)."""
    heard = _keys(transcript, language)
    wanted = set(entity_variants(entity)) | _keys(entity, language)
    return any(w in h for w in wanted if w for h in heard)


def missed_entities(entities: list[str], transcript: str, language: str | None = None) -> list[str]:
    """The entities of ``entities`` that ``transcript`` does not carry, in order."""
    return [e for e in entities if not entity_spoken(e, transcript, language)]
