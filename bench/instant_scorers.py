"""Instant scoring providers for benchmarks that time the framework, not the models: an ASR
that returns a fixed transcript and always hears English, and a MOS model that returns a
fixed score, both registered as ``bench-instant``. A run config uses them with
``asr``, ``language_id`` and ``mos`` set to ``{provider: bench-instant}``."""

from __future__ import annotations

from typing import Any

from voxeval.audio import Audio
from voxeval.providers.asr.spoken_language import SpokenLanguage
from voxeval.providers.base import MOSResult, Transcript
from voxeval.registry import register


def register_instant_scorers(transcript: str) -> None:
    """Register ``asr: bench-instant`` (always hears ``transcript``) and ``mos: bench-instant``."""

    @register("asr", "bench-instant")
    class InstantASR:
        name = "bench-instant"

        def identity(self) -> dict[str, Any]:
            return {"provider": self.name}

        def transcribe(self, audio: Audio, **_: Any) -> Transcript:
            return Transcript(text=transcript, language="en", provider=self.name)

        def identify_language(self, audio: Audio) -> SpokenLanguage:
            return SpokenLanguage("en", 1.0, {"en": 1.0}, model=self.name)

    @register("mos", "bench-instant")
    class InstantMOS:
        name = "bench-instant"

        def identity(self) -> dict[str, Any]:
            return {"provider": self.name}

        def predict(self, audio: Audio) -> MOSResult:
            return MOSResult(overall=3.5, scores={"ovrl": 3.5}, model=self.name)
