"""Systems under test."""

from voxeval.systems.base import Reply, Turn, TurnSystem

__all__ = ["Reply", "Turn", "TurnSystem"]
