"""Everything the report shows for one arena dimension, from its battles, JSON-ready."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from voxeval.analysis.ratings.battles import Battle
from voxeval.analysis.ratings.bradley_terry import (
    DEFAULT_RATING_CONFIDENCE,
    BattleArrays,
    DisconnectedComparisons,
    bradley_terry,
    disconnected_ratings,
    require_connected,
)
from voxeval.analysis.ratings.elo import online_elo
from voxeval.analysis.ratings.elo_intervals import EloPoint, elo_intervals
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.analysis.ratings.style_control import STYLE_FEATURES, style_controlled
from voxeval.analysis.ratings.win_matrix import win_matrix


def arena_summary(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    style_features: Sequence[str] = STYLE_FEATURES,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    elo_point: EloPoint = "final",
) -> dict[str, Any]:
    """``{"dimension", "n_battles", "ties", "elo", "elo_intervals", "bt",
    "style_controlled", "win_matrix"}`` for the battles of one dimension (``elo``: the
    online Elo in judging order; ``elo_intervals``: the same with bootstrap intervals and
    rank intervals). When the battles do not link every system, ``bt`` holds the ridge fit
    with every system unbounded, ``style_controlled`` is None, and ``ratings_note`` says
    why; with no battles all three are None."""
    dimensions = sorted({battle.dimension for battle in battles})
    if len(dimensions) > 1:
        raise ValueError(f"arena summary: battles of several dimensions {dimensions}")
    summary: dict[str, Any] = {
        "dimension": dimensions[0] if dimensions else None,
        "n_battles": len(battles),
        "ties": sum(1 for battle in battles if battle.winner == "tie"),
        "elo": online_elo(battles),
        "elo_intervals": None,
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
    elo_options = {k: v for k, v in options.items() if k != "anchor"}
    arrays = BattleArrays.of(battles)
    if not arrays.is_connected():
        summary["bt"] = disconnected_ratings(battles, anchor=anchor, confidence=confidence)
        reasons = {name: r["unbounded"] for name, r in summary["bt"]["systems"].items()}
        summary["elo_intervals"] = elo_intervals(
            battles, point=elo_point, unbounded=reasons, **elo_options
        )
        try:
            require_connected(arrays)
        except DisconnectedComparisons as error:
            summary["ratings_note"] = f"{error}: every rating is unbounded"
        return summary
    summary["elo_intervals"] = elo_intervals(battles, point=elo_point, **elo_options)
    summary["bt"] = bradley_terry(battles, **options)
    summary["style_controlled"] = style_controlled(battles, features=style_features, **options)
    return summary
