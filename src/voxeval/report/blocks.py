"""The plain blocks a report is made of (headings, paragraphs, tables, lists) and the number
formats their cells share; ``report.document`` builds them, the serialisers render them."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.json_types import JSONReadObject, JSONReadValue


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class TableBlock:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class BulletList:
    items: list[str]


Block = Heading | Paragraph | TableBlock | BulletList


def fmt_num(value: JSONReadValue, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # 1,000 and above: whole numbers, never an exponent (2260, not 2.26e+03)
        return f"{value:.{digits}g}" if abs(value) < 1e3 else f"{value:.0f}"
    return str(value)


def fmt_ci(stat: JSONReadObject) -> str:
    """``[low, high]``, or the reason there is no interval (e.g. "all values equal")."""
    if stat.get("ci_low") is None or stat.get("ci_high") is None:
        note = stat.get("ci_note")
        return f"none ({note})" if note and stat.get("n") else "–"
    return f"[{fmt_num(stat['ci_low'])}, {fmt_num(stat['ci_high'])}]"


def fmt_mean_ci(stat: JSONReadObject) -> str:
    """``mean [low, high]`` in one cell, or ``mean (no interval: reason)``."""
    mean = fmt_num(stat.get("mean"))
    if stat.get("ci_low") is None or stat.get("ci_high") is None:
        note = stat.get("ci_note")
        return f"{mean} (no interval: {note})" if note and stat.get("n") else mean
    return f"{mean} {fmt_ci(stat)}"
