"""Turning a party's text into speech for the call engine (``SpeechRenderer``; it lives in
``voxeval.providers.speech_renderer`` because systems under test speak through it too)."""

from voxeval.providers.speech_renderer import SpeechRenderer, shared_renderer

__all__ = ["SpeechRenderer", "shared_renderer"]
