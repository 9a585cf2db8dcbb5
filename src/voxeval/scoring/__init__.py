"""Metrics: each takes a typed record and returns a ``Score``."""

from voxeval.scoring.score import Score

__all__ = ["Score"]
