"""Systems under test; importing this package registers the built-in systems."""

from voxeval.systems.base import Reply, Turn, TurnSystem
from voxeval.systems.cascade import TINY_BASELINE_LABEL, CascadeOptions, CascadeSystem
from voxeval.systems.http_system import HTTPOptions, HTTPSystem, HTTPSystemError
from voxeval.systems.openai_audio import OpenAIAudioOptions, OpenAIAudioSystem
from voxeval.systems.replay import MissingReply, ReplayOptions, ReplaySystem

__all__ = [
    "TINY_BASELINE_LABEL",
    "CascadeOptions",
    "CascadeSystem",
    "HTTPOptions",
    "HTTPSystem",
    "HTTPSystemError",
    "MissingReply",
    "OpenAIAudioOptions",
    "OpenAIAudioSystem",
    "ReplayOptions",
    "ReplaySystem",
    "Reply",
    "Turn",
    "TurnSystem",
]
