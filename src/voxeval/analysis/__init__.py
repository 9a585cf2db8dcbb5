"""Statistics: cluster-bootstrap and Wilson CIs, the pass@k family, and arena ratings."""

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
from voxeval.analysis.ratings.arena_pairing import AdaptivePairing, all_pairs, closest_pairs
from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import Battle, battle_from_judgement
from voxeval.analysis.ratings.bradley_terry import DisconnectedComparisons, bradley_terry
from voxeval.analysis.ratings.elo import online_elo
from voxeval.analysis.ratings.rank_intervals import RankInterval, rank_intervals
from voxeval.analysis.ratings.style_control import style_controlled
from voxeval.analysis.ratings.win_matrix import win_matrix

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "AdaptivePairing",
    "Battle",
    "ClusteredSample",
    "DisconnectedComparisons",
    "RankInterval",
    "Stat",
    "all_pairs",
    "arena_summary",
    "battle_from_judgement",
    "bradley_terry",
    "closest_pairs",
    "clustered_sample",
    "design_effect",
    "metric_stats",
    "online_elo",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_hat_k",
    "pass_hat_k_curve",
    "passk_summary",
    "rank_intervals",
    "rate_stats",
    "style_controlled",
    "wilson_interval",
    "win_matrix",
]
