"""The audio bus of a call: one track per party at a common rate, plus their sum.

Parties write whole utterances at a start time; writes may overlap (both parties talking at
once) and may be cut short when a speaker yields. Tracks grow as needed; the mixed track is
their sum, scaled down as a whole only when it would clip.
"""

from __future__ import annotations

import numpy as np
import soxr

from voxeval.audio import Audio
from voxeval.audio.mix import mix_tracks

BUS_RATE = 16000
SPEAKERS = ("user", "assistant")
FADE_S = 0.01  # a speaker who stops early fades out over this long instead of a hard cut


def to_rate(audio: Audio, rate: int = BUS_RATE) -> Audio:
    """``audio`` resampled to ``rate`` (unchanged when it already matches)."""
    if audio.rate == rate:
        return audio
    data = soxr.resample(audio.samples, audio.rate, rate).astype(np.float32)
    return Audio(data, rate, audio.source)


def fade_out(samples: np.ndarray, length: int) -> np.ndarray:
    """``samples`` with their last ``length`` samples ramped to silence (raised cosine)."""
    n = min(length, samples.size)
    if n <= 0:
        return samples
    out = samples.astype(np.float32, copy=True)
    out[-n:] *= (0.5 + 0.5 * np.cos(np.pi * (np.arange(1, n + 1) / n))).astype(np.float32)
    return out


class AudioBus:
    def __init__(self, rate: int = BUS_RATE) -> None:
        self.rate = rate
        # storage grows geometrically; ``_length`` is how much of it is the track
        self._tracks: dict[str, np.ndarray] = {s: np.zeros(0, np.float32) for s in SPEAKERS}
        self._length: dict[str, int] = dict.fromkeys(SPEAKERS, 0)

    def write(
        self,
        speaker: str,
        audio: Audio,
        start_s: float,
        end_s: float | None = None,
        fade_s: float = 0.0,
    ) -> None:
        """Add ``audio`` to ``speaker``'s track from ``start_s``; stop at ``end_s`` if given
        (the speaker yielded: the rest of the audio is never played), its last ``fade_s``
        faded out (a stop ramps down rather than cutting the waveform)."""
        if speaker not in self._tracks:
            raise ValueError(f"unknown speaker {speaker!r}; expected one of {SPEAKERS}")
        data = to_rate(audio, self.rate).samples
        if end_s is not None:
            data = data[: max(0, round((end_s - start_s) * self.rate))]
        if fade_s > 0 and data.size:
            data = fade_out(data, round(fade_s * self.rate))
        a = round(start_s * self.rate)
        b = a + data.size
        track = self._tracks[speaker]
        if track.size < b:
            grown = np.zeros(max(b, 2 * track.size), np.float32)
            grown[: track.size] = track
            track = self._tracks[speaker] = grown
        track[a:b] += data
        self._length[speaker] = max(self._length[speaker], b)

    @property
    def duration(self) -> float:
        return max(self._length.values()) / self.rate

    def track(self, speaker: str, length_s: float | None = None) -> Audio:
        """The speaker's track, padded with silence to ``length_s`` (default: the longer one)."""
        n = round((length_s if length_s is not None else self.duration) * self.rate)
        data = self._tracks[speaker][: min(n, self._length[speaker])]
        return Audio(np.pad(data, (0, n - data.size)), self.rate, f"<bus:{speaker}>")

    def mixed(self, length_s: float | None = None) -> Audio:
        """Both tracks summed with headroom (``mix_tracks``): when the parties' overlapping
        speech would clip, the whole sum is scaled down instead."""
        tracks = [self.track("user", length_s), self.track("assistant", length_s)]
        return mix_tracks(tracks, source="<bus:mixed>")
