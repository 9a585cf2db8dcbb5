"""Everything the report shows for one arena dimension, from its battles, JSON-ready."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from voxeval.analysis.battles import Battle
from voxeval.analysis.bradley_terry import (
    DEFAULT_RATING_CONFIDENCE,
    DisconnectedComparisons,
    bradley_terry,
)
from voxeval.analysis.elo import online_elo
from voxeval.analysis.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.analysis.style_control import STYLE_FEATURES, style_controlled
from voxeval.analysis.win_matrix import win_matrix


def arena_summary(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    style_features: Sequence[str] = STYLE_FEATURES,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
) -> dict[str, Any]:
    """``{"dimension", "n_battles", "ties", "elo", "bt", "style_controlled", "win_matrix"}``
    for the battles of one dimension. ``bt`` and ``style_controlled`` are None with a
    ``ratings_note`` when the battles do not link every system (or there are none)."""
    dimensions = sorted({battle.dimension for battle in battles})
    if len(dimensions) > 1:
        raise ValueError(f"arena summary: battles of several dimensions {dimensions}")
    summary: dict[str, Any] = {
        "dimension": dimensions[0] if dimensions else None,
        "n_battles": len(battles),
        "ties": sum(1 for battle in battles if battle.winner == "tie"),
        "elo": online_elo(battles),
        "bt": None,
        "style_controlled": None,
        "win_matrix": win_matrix(battles),
    }
    if not battles:
        summary["ratings_note"] = "no battles"
        return summary
    options: dict[str, Any] = {
        "anchor": anchor,
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
    }
    try:
        summary["bt"] = bradley_terry(battles, **options)
        summary["style_controlled"] = style_controlled(battles, features=style_features, **options)
    except DisconnectedComparisons as error:
        summary["ratings_note"] = str(error)
    return summary
