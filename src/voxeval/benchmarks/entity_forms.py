"""Compact spoken forms of key entities (IDs, codes, dates), for checking whether a text
carries an entity however it was said or transcribed: ``K X 4, nine 2 B 7`` and ``KX-492B7``
share one form. Used by the scoring metrics and by the listening reference agent."""

from __future__ import annotations

import re
from datetime import date

_DIGITS = {
    "zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)\b")


def entity_key(text: str) -> str:
    """Compact form for entity matching: lower case, ordinals and spoken digits as digits,
    punctuation and spaces removed (``K X 4, nine 2 B 7`` -> ``kx492b7``)."""
    words = re.sub(r"[^0-9a-z]+", " ", _ORDINAL.sub(r"\1", text.lower())).split()
    return "".join(_DIGITS.get(w, w) for w in words)


def entity_variants(value: str) -> set[str]:
    """Ways an entity can be spoken: as written, and ISO dates also as "March 5 1987" and
    "5 March 1987"."""
    variants = {entity_key(value)}
    try:
        day = date.fromisoformat(value.strip()[:10])
    except ValueError:
        return variants
    month = _MONTHS[day.month - 1]
    variants.add(entity_key(f"{month} {day.day} {day.year}"))
    variants.add(entity_key(f"{day.day} {month} {day.year}"))
    return variants
