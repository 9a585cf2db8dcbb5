from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from voxeval.analysis.ratings.paired_logit import fit_paired_logit


def test_matches_statsmodels_logistic_regression_with_covariates() -> None:
    # Independent check: the same model as a weighted GLM on the design matrix of system
    # indicators (+1 for A, -1 for B, system 0 as reference) and two covariates; a tie is two
    # rows (A won, B won) of weight 0.5.
    rng = np.random.default_rng(3)
    n, n_systems = 400, 4
    index_a = rng.integers(0, n_systems, n)
    index_b = (index_a + rng.integers(1, n_systems, n)) % n_systems
    features = rng.normal(size=(n, 2))
    theta_true = np.array([0.0, 0.4, -0.3, 0.9])
    z = theta_true[index_a] - theta_true[index_b] + features @ np.array([0.8, -0.2])
    score = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(float)
    score[rng.random(n) < 0.1] = 0.5

    params = fit_paired_logit(
        index_a, index_b, score, 1 - score, n_systems, features=features, ridge=1e-8
    )

    indicators = np.zeros((n, n_systems))
    indicators[np.arange(n), index_a] += 1
    indicators[np.arange(n), index_b] -= 1
    design = np.hstack([indicators[:, 1:], features])
    rows = np.vstack([design, design])
    outcome = np.concatenate([np.ones(n), np.zeros(n)])
    weights = np.concatenate([score, 1 - score])
    keep = weights > 0
    glm = sm.GLM(
        outcome[keep], rows[keep], family=sm.families.Binomial(), var_weights=weights[keep]
    ).fit()
    theta = params[:n_systems]
    assert theta.sum() == pytest.approx(0, abs=1e-9)
    assert theta[1:] - theta[0] == pytest.approx(glm.params[: n_systems - 1], abs=1e-4)
    assert params[n_systems:] == pytest.approx(glm.params[n_systems - 1 :], abs=1e-4)


def test_zero_total_weight_is_refused() -> None:
    zero = np.zeros(2)
    with pytest.raises(ValueError, match="no battle has a positive weight"):
        fit_paired_logit(np.array([0, 1]), np.array([1, 0]), zero, zero, 2)
