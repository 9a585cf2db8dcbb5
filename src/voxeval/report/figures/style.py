"""The look every report figure shares: a colour-blind-safe palette (Okabe and Ito), sizes,
and matplotlib settings that keep the SVG self-contained and byte-for-byte repeatable."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Okabe-Ito colours, distinguishable with the common colour-vision deficiencies.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HEATMAP = "cividis"  # perceptually uniform and colour-blind-safe
WIDE = (7.0, 3.6)
SQUARE = (5.0, 4.4)
FONT_SIZE = 9.0

RC = {
    "svg.fonttype": "path",  # glyphs as paths: no font file or network needed to view
    "font.family": "DejaVu Sans",  # shipped with matplotlib, so every machine draws the same
    "font.size": FONT_SIZE,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "path.simplify": False,
}


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def marker(index: int) -> str:
    return MARKERS[index % len(MARKERS)]


def slug(text: str) -> str:
    """A fragment for ids and file names: lower case, runs of other characters as ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def condition_order(conditions: Sequence[str]) -> list[str]:
    """The clean (baseline) condition first, the rest in their given order."""
    return sorted(conditions, key=lambda c: c != "clean")
