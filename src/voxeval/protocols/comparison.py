"""Moved to ``voxeval.api.comparison`` (the contract package); kept so existing imports work."""

from voxeval.api.comparison import Comparison

__all__ = ["Comparison"]
