"""Maximum-likelihood fit of a paired-comparison logistic model (Bradley-Terry and its
style-controlled variant), with scipy's L-BFGS on the log-strengths.

Row r compares system a_r with system b_r; P(a_r beats b_r) = sigmoid(theta[a_r] - theta[b_r]
+ x_r . beta), where x_r are optional covariates (style features) and beta their coefficients.
Each row carries a weight of A-wins and of B-wins (a tie adds half to each), so the negative
log-likelihood is sum_r wins_a_r softplus(-z_r) + wins_b_r softplus(z_r).

Identifiability: the likelihood does not change when every theta moves by the same amount, so a
tiny ridge penalty ``ridge/2 * |params|^2`` is added. Because the likelihood's theta-gradient
sums to zero, the penalised optimum has sum(theta) = 0 exactly: the strengths come out centred.
The ridge also keeps the estimate finite when a system won (or lost) every battle, where the
plain MLE does not exist; such a rating is large and its interval wide, not infinite.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

RIDGE = 1e-4
_GRADIENT_TOLERANCE = 1e-6


def fit_paired_logit(
    index_a: np.ndarray,
    index_b: np.ndarray,
    wins_a: np.ndarray,
    wins_b: np.ndarray,
    n_systems: int,
    *,
    features: np.ndarray | None = None,
    ridge: float = RIDGE,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Parameters ``[theta_0 .. theta_{S-1}, beta_0 .. beta_{F-1}]`` maximising the penalised
    likelihood. Raises RuntimeError when L-BFGS stops away from an optimum."""
    n_features = 0 if features is None else features.shape[1]
    total = float(wins_a.sum() + wins_b.sum())
    if total <= 0:
        raise ValueError("paired logit: no battle has a positive weight")

    def objective(params: np.ndarray) -> tuple[float, np.ndarray]:
        theta, beta = params[:n_systems], params[n_systems:]
        z = theta[index_a] - theta[index_b]
        if features is not None:
            z = z + features @ beta
        nll = -(wins_a @ log_expit(z) + wins_b @ log_expit(-z))
        # d nll / d z: the expected minus the observed A-wins of each row
        dz = wins_b * expit(z) - wins_a * expit(-z)
        grad = np.empty_like(params)
        grad[:n_systems] = np.bincount(index_a, dz, n_systems) - np.bincount(index_b, dz, n_systems)
        if features is not None:
            grad[n_systems:] = features.T @ dz
        value = nll + 0.5 * ridge * float(params @ params)
        grad += ridge * params
        # Scaled by the total weight so the tolerances mean the same for 10 or 10,000 battles.
        return value / total, grad / total

    x0 = np.zeros(n_systems + n_features) if start is None else np.asarray(start, dtype=float)
    result = minimize(
        objective,
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-15},
    )
    gradient_norm = float(np.max(np.abs(result.jac))) if result.jac is not None else np.inf
    if not result.success and gradient_norm > _GRADIENT_TOLERANCE:
        raise RuntimeError(f"paired logit: L-BFGS did not converge ({result.message})")
    return np.asarray(result.x, dtype=float)
