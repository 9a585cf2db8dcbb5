"""Which way a metric is better, so results of two systems can be compared.

A metric is ``"higher"`` is better (judge scores, MOS, pass rates) or ``"lower"`` is better
(word error rates). Descriptive metrics (reply duration, speaking rate, latency) have no better
direction: comparisons across systems skip them rather than guess. Each metric declares its
direction where it is registered (``@metric(NAME, better=...)``, ``voxeval.scoring.metric``).
"""

from __future__ import annotations

from voxeval.scoring.metric import Better, metric_info

__all__ = ["Better", "metric_direction"]


def metric_direction(name: str) -> Better | None:
    """``"higher"``/``"lower"`` for a registered metric, None for a descriptive one.
    Raises ``UnknownComponent`` for a name that is not a registered metric."""
    info = metric_info(name)
    return None if info is None else info.better
