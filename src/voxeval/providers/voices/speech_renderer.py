"""Turning a party's text into speech at the call bus rate (16 kHz).

A voice is ``engine:voice`` (``piper:joe``, ``espeak:en-gb-scotland+f3``) or a speaker profile
(``female,adult,scottish``: the closest catalogue voice plus a transform). Pause markers in the
text (``...``) become real silences, so a caller's hesitations can trigger an agent's
end-of-turn detector; ``rate`` changes the speaking tempo without changing pitch.

It sits with the providers because both sides of a call use it: the simulated caller and the
systems under test that speak through a voice (cascade and hybrid agents)."""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np

from voxeval.audio import Audio
from voxeval.audio.resample import resample
from voxeval.providers.voices.speaker_transform import SpeakerTransform
from voxeval.providers.voices.voice_catalogue import (
    SpeakerProfile,
    VoiceChoice,
    render_speech,
    select_voice,
    voice_language,
)

RENDER_RATE = 16000
PAUSE_MARKER = re.compile(r"\s*(?:\.\.\.|…|\[pause\])\s*")

_warmed: set[tuple[str, float, str | None]] = set()


class SpeechRenderer:
    def __init__(
        self,
        voice: str = "piper:joe",
        *,
        rate: float = 1.0,
        pause_s: float = 1.0,
        language: str | None = None,
    ):
        self.voice = voice
        self.rate = rate
        self.pause_s = pause_s
        self.language = language
        self._speaker: str | VoiceChoice
        if ":" in voice:
            self._speaker = voice
        else:
            profile = SpeakerProfile.parse(voice)
            if language and voice_language(voice) is None:  # the profile follows the run
                profile = dataclasses.replace(profile, language=language)
            self._speaker = select_voice(profile)
        self._tempo = SpeakerTransform(tempo=round(min(2.0, max(0.5, rate)), 2))

    def __call__(self, text: str) -> Audio:
        pieces = [p.strip() for p in PAUSE_MARKER.split(text) if p.strip()]
        gap = np.zeros(round(self.pause_s * RENDER_RATE), np.float32)
        parts: list[np.ndarray] = []
        for n, piece in enumerate(pieces or [text]):
            audio = resample(render_speech(piece, self._speaker), RENDER_RATE)
            if not self._tempo.is_identity:
                audio = self._tempo.apply(audio)
            parts += ([gap] if n else []) + [audio.samples]
        return Audio(np.concatenate(parts), RENDER_RATE, f"<voice:{self.voice}>")

    def warm_up(self) -> None:
        """Load the voice's model now (once per process), so that loading time is not counted
        as a party's latency in its first turn."""
        key = (self.voice, self.rate, self.language)
        if key not in _warmed:
            self("Hello.")
            _warmed.add(key)


@functools.lru_cache(maxsize=64)
def shared_renderer(voice: str, rate: float = 1.0, language: str | None = None) -> SpeechRenderer:
    """One renderer per (voice, rate, language) per process: voice selection is done once. A
    speaker profile that names no language gets a voice of ``language``."""
    return SpeechRenderer(voice, rate=rate, language=language)
