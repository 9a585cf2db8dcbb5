"""Instant scoring providers for benchmarks that time the framework, not the models: an ASR
that returns a fixed transcript and a MOS model that returns a fixed score, both registered
as ``bench-instant``."""

from __future__ import annotations

from typing import Any

from voxeval.audio import Audio
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

    @register("mos", "bench-instant")
    class InstantMOS:
        name = "bench-instant"

        def identity(self) -> dict[str, Any]:
            return {"provider": self.name}

        def predict(self, audio: Audio) -> MOSResult:
            return MOSResult(overall=3.5, scores={"ovrl": 3.5}, model=self.name)
