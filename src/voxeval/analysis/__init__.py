"""Statistics: cluster-bootstrap and Wilson CIs, and the pass@k family."""

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Stat, metric_stats
from voxeval.analysis.clusters import ClusteredSample, clustered_sample
from voxeval.analysis.passk import (
    pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
    pass_hat_k_curve,
    passk_summary,
)
from voxeval.analysis.proportion import design_effect, rate_stats, wilson_interval

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "ClusteredSample",
    "Stat",
    "clustered_sample",
    "design_effect",
    "metric_stats",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_hat_k",
    "pass_hat_k_curve",
    "passk_summary",
    "rate_stats",
    "wilson_interval",
]
