"""Style-controlled Bradley-Terry: ratings with the judge's taste for long replies taken out.

A judge may prefer the longer (or longer-sounding) dialogue whatever its quality. For each
battle and style feature f (``length`` in words, ``duration`` in seconds) the normalised
difference d_f = (f_A - f_B) / (f_A + f_B + 1) is computed, then z-scored over the battles
(mean 0, standard deviation 1; the mean and deviation come from all battles and stay fixed in
the bootstrap rounds). The model adds these covariates to Bradley-Terry:
P(A beats B) = sigmoid(theta_A - theta_B + sum_f beta_f z_f), fitted by the same penalised
L-BFGS maximum likelihood, ties as half wins. The style-controlled ratings are the thetas on
the Elo scale; beta_f is the judge's log-odds preference per standard deviation of the
feature (positive: the side with more of f is favoured), also given in rating points.

A feature is left out, with the reason, when a battle lacks it or when it does not vary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from voxeval.analysis.ratings.battles import Battle
from voxeval.analysis.ratings.bradley_terry import (
    DEFAULT_RATING_CONFIDENCE,
    RATING_SCALE,
    BattleArrays,
    anchor_index_of,
    item_bootstrap_interval,
    rating_report,
    require_connected,
    strengths_to_ratings,
)
from voxeval.analysis.ratings.paired_logit import RIDGE, fit_paired_logit
from voxeval.analysis.ratings.rating_bootstrap import (
    DEFAULT_RATING_RESAMPLES,
)

STYLE_FEATURES = ("length", "duration")


def style_difference(value_a: float, value_b: float) -> float:
    """(a - b) / (a + b + 1): bounded, symmetric, and defined when both are zero."""
    return (value_a - value_b) / (value_a + value_b + 1.0)


def style_covariates(
    battles: Sequence[Battle], features: Sequence[str] = STYLE_FEATURES
) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """The z-scored difference matrix (battles x usable features), the usable feature names,
    and ``{feature: why it was left out}``."""
    columns: list[np.ndarray] = []
    used: list[str] = []
    dropped: dict[str, str] = {}
    for name in features:
        lacking = sum(1 for b in battles if name not in b.features_a or name not in b.features_b)
        if lacking:
            dropped[name] = f"missing on {lacking} of {len(battles)} battles"
            continue
        raw = np.array([style_difference(b.features_a[name], b.features_b[name]) for b in battles])
        spread = float(raw.std())
        if spread <= 1e-12:
            dropped[name] = "does not vary across battles"
            continue
        columns.append((raw - raw.mean()) / spread)
        used.append(name)
    matrix = np.column_stack(columns) if columns else np.empty((len(battles), 0))
    return matrix, used, dropped


def style_controlled(
    battles: Sequence[Battle],
    *,
    features: Sequence[str] = STYLE_FEATURES,
    anchor: str | None = None,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    ridge: float = RIDGE,
) -> dict[str, Any]:
    """Style-controlled ratings in the layout of ``bradley_terry`` plus ``coefficients``
    (``{feature: {"coefficient", "rating_points", "ci_low", "ci_high"}}``, log-odds per
    standard deviation; the interval is on the coefficient), ``features_used`` and
    ``features_dropped``."""
    arrays = BattleArrays.of(battles)
    require_connected(arrays)
    anchor_index = anchor_index_of(arrays.systems, anchor)
    covariates, used, dropped = style_covariates(battles, features)
    n_systems = len(arrays.systems)

    def fit(weights: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
        return fit_paired_logit(
            arrays.index_a,
            arrays.index_b,
            weights * arrays.score_a,
            weights * (1.0 - arrays.score_a),
            n_systems,
            features=covariates if used else None,
            ridge=ridge,
            start=start,
        )

    params = fit(np.ones(len(battles)))
    ratings = strengths_to_ratings(params[:n_systems], anchor_index)
    beta = params[n_systems:]

    def refit(weights: np.ndarray) -> np.ndarray | None:
        if not arrays.is_connected(weights):
            return None
        boot = fit(weights, start=params)
        return np.concatenate(
            [strengths_to_ratings(boot[:n_systems], anchor_index), boot[n_systems:]]
        )

    interval = item_bootstrap_interval(
        arrays, refit, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    low, high = interval.low, interval.high
    report = rating_report(
        arrays,
        ratings,
        None if low is None else low[:n_systems],
        None if high is None else high[:n_systems],
        anchor=anchor,
        confidence=confidence,
        resamples=interval.resamples,
        dropped=interval.dropped,
        note=interval.note,
    )
    report["coefficients"] = {
        name: {
            "coefficient": float(beta[f]),
            "rating_points": float(RATING_SCALE * beta[f]),
            "ci_low": None if low is None else float(low[n_systems + f]),
            "ci_high": None if high is None else float(high[n_systems + f]),
        }
        for f, name in enumerate(used)
    }
    report["features_used"] = used
    report["features_dropped"] = dropped
    return report
