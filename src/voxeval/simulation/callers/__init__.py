"""Simulated callers; importing this package registers them."""

from voxeval.simulation.callers.llm_caller import LLMCaller
from voxeval.simulation.callers.scripted_caller import ScriptedCaller

__all__ = ["LLMCaller", "ScriptedCaller"]
