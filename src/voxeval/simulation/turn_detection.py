"""End-of-turn detection: frame-level voice activity plus a silence threshold.

A listener decides the speaker has finished once it has heard ``silence_s`` of non-speech after
speech. Detection works on 20 ms frames, so a pause inside an utterance that is longer than the
threshold ends the turn early: the listener starts answering while the speaker is about to
resume, which is how real agents interrupt their callers.

In text-only mode utterances have no audio; their length comes from a speaking rate (words per
second) and explicit pause markers (``...``, ``…`` or ``[pause]``) in the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.providers.base import VAD
from voxeval.providers.voices.speech_renderer import PAUSE_MARKER
from voxeval.systems.turn_handling import words_spoken

FRAME_S = 0.02


@dataclass(frozen=True)
class Chunk:
    """A stretch of speech that the listener hears as one turn (times relative to the
    utterance start). ``text`` is set in text-only mode."""

    start: float
    end: float
    text: str = ""


@dataclass(frozen=True)
class Utterance:
    """One party's turn as placed on the line: trimmed audio (None in text-only mode), its
    duration and the chunks a listener's end-of-turn detector splits it into."""

    duration: float
    chunks: tuple[Chunk, ...]
    audio: Audio | None = None
    text: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class FrameVAD(Protocol):
    def speech_frames(self, audio: Audio, frame_s: float) -> npt.NDArray[np.bool_]: ...


class EnergyVAD:
    """Speech where a frame's RMS level is within ``range_db`` of the loudest frames and above
    ``floor_db`` dBFS. Needs no model; adequate for clean synthetic speech."""

    def __init__(self, floor_db: float = -50.0, range_db: float = 35.0) -> None:
        self.floor_db = floor_db
        self.range_db = range_db

    def speech_frames(self, audio: Audio, frame_s: float) -> npt.NDArray[np.bool_]:
        n = max(1, round(frame_s * audio.rate))
        count = audio.num_samples // n
        if count == 0:
            return np.zeros(0, bool)
        frames = audio.samples[: count * n].reshape(count, n).astype(np.float64)
        db = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
        reference = float(np.percentile(db, 95))
        threshold = max(self.floor_db, reference - self.range_db)
        out: npt.NDArray[np.bool_] = db > threshold
        return out


class ProviderVAD:
    """Adapts a VAD provider (``speech_probabilities`` or ``segments``) to frame decisions."""

    def __init__(self, provider: VAD, threshold: float = 0.5) -> None:
        self.provider = provider
        self.threshold = threshold

    def speech_frames(self, audio: Audio, frame_s: float) -> npt.NDArray[np.bool_]:
        count = int(audio.duration / frame_s)
        if count == 0:
            return np.zeros(0, bool)
        scored = self.provider.speech_probabilities(audio)
        if scored is not None:  # raw frame probabilities keep short pauses visible
            starts, probs = np.asarray(scored[0], float), np.asarray(scored[1], float)
            centres = (np.arange(count) + 0.5) * frame_s
            index = np.clip(np.searchsorted(starts, centres, side="right") - 1, 0, probs.size - 1)
            out: npt.NDArray[np.bool_] = probs[index] >= self.threshold
            return out
        flags = np.zeros(count, bool)
        segments = self.provider.segments(audio)
        for seg in segments:
            a, b = int(seg.start / frame_s), int(np.ceil(seg.end / frame_s))
            flags[max(0, a) : min(count, b)] = True
        return flags


class TurnDetector:
    """Splits an utterance into the chunks a listener hears as separate turns.

    ``silence_s``: silence after speech that ends a turn (default 0.7 s);
    ``min_speech_s``: shorter bursts (clicks, breaths) are ignored;
    ``words_per_s``/``pause_s``: text-only timing (150 words per minute, 1 s pauses)."""

    def __init__(
        self,
        silence_s: float = 0.7,
        *,
        vad: FrameVAD | None = None,
        min_speech_s: float = 0.06,
        words_per_s: float = 2.5,
        pause_s: float = 1.0,
    ) -> None:
        if silence_s <= 0:
            raise ValueError("silence_s must be positive")
        self.silence_s = silence_s
        self.vad: FrameVAD = vad or EnergyVAD()
        self.min_speech_s = min_speech_s
        self.words_per_s = words_per_s
        self.pause_s = pause_s

    def speech_runs(self, audio: Audio) -> list[tuple[float, float]]:
        flags = self.vad.speech_frames(audio, FRAME_S)
        runs: list[tuple[float, float]] = []
        i = 0
        while i < flags.size:
            if not flags[i]:
                i += 1
                continue
            j = i
            while j < flags.size and flags[j]:
                j += 1
            if (j - i) * FRAME_S >= self.min_speech_s:
                runs.append((i * FRAME_S, min(j * FRAME_S, audio.duration)))
            i = j
        return runs

    def group(self, runs: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Merge runs separated by less than ``silence_s``: each group ends in an end of turn."""
        groups: list[list[float]] = []
        for start, end in runs:
            if groups and start - groups[-1][1] < self.silence_s:
                groups[-1][1] = end
            else:
                groups.append([start, end])
        return [(a, b) for a, b in groups]

    def from_audio(self, audio: Audio, text: str = "") -> Utterance:
        """Trim leading/trailing silence and find the chunks. Audio without speech gives an
        utterance with no chunks."""
        runs = self.group(self.speech_runs(audio))
        if not runs:
            return Utterance(0.0, (), audio.slice(0, 0), text)
        offset, last = runs[0][0], runs[-1][1]
        trimmed = audio.slice(offset, last)
        chunks = tuple(Chunk(a - offset, b - offset) for a, b in runs)
        return Utterance(trimmed.duration, chunks, trimmed, text)

    def from_text(self, text: str, *, rate_factor: float = 1.0) -> Utterance:
        """Text-only timing: words at ``words_per_s * rate_factor``, pauses at markers."""
        pieces = [p for p in PAUSE_MARKER.split(text) if p.strip()]
        wps = self.words_per_s * rate_factor
        spans: list[tuple[float, float, str]] = []
        t = 0.0
        for n, piece in enumerate(pieces):
            if n:
                t += self.pause_s
            length = max(1, len(piece.split())) / wps
            spans.append((t, t + length, piece.strip()))
            t += length
        chunks: list[Chunk] = []
        for start, end, piece in spans:
            if chunks and start - chunks[-1].end < self.silence_s:
                prev = chunks[-1]
                chunks[-1] = Chunk(prev.start, end, f"{prev.text} {piece}")
            else:
                chunks.append(Chunk(start, end, piece))
        return Utterance(t, tuple(chunks), None, text)


__all__ = [
    "Chunk",
    "EnergyVAD",
    "FrameVAD",
    "ProviderVAD",
    "TurnDetector",
    "Utterance",
    "words_spoken",
]
