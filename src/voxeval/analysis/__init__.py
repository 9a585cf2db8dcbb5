"""Statistics: bootstrap CIs and the pass@k family."""

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Stat, metric_stats
from voxeval.analysis.passk import (
    pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
    pass_hat_k_curve,
    passk_summary,
)

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "Stat",
    "metric_stats",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_hat_k",
    "pass_hat_k_curve",
    "passk_summary",
]
