"""The plural of an independent unit's name as tables print it ("12 queries", "over
dialogues"): appending "s" made "querys"."""

from __future__ import annotations

_IRREGULAR = {"query": "queries"}


def unit_plural(unit: str) -> str:
    """``query`` -> ``queries``, ``dialogue`` -> ``dialogues``, ``item`` -> ``items``."""
    return _IRREGULAR.get(unit, f"{unit}s")
