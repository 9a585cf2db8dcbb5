"""The immutable ``Audio`` value: float32 mono samples plus a sample rate."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from voxeval.errors import AudioError

# Longest audio we accept in one value: a day of speech is not a benchmark item.
MAX_SECONDS = 4 * 3600.0
MIN_RATE, MAX_RATE = 1000, 384_000


@dataclass(frozen=True, eq=False)
class Audio:
    """Mono float32 audio in [-1, 1] (not enforced: mixing may exceed it) at ``rate`` Hz.

    The sample array is made read-only so an ``Audio`` can be shared safely; every operation
    returns a new value. ``source`` is a human label (usually a file path) used in errors.
    """

    samples: npt.NDArray[np.float32]
    rate: int
    source: str = field(default="<memory>", compare=False)
    # The value's 16-bit PCM WAV bytes once known (read from such a file or encoded once):
    # uploads and artifacts reuse them instead of encoding the same samples again. Safe to
    # keep because the samples never change (see ``voxeval.audio.io.audio_to_wav_bytes``).
    encoded_wav: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        data = np.asarray(self.samples)
        where = self.source
        if data.ndim != 1:
            raise AudioError(f"{where}: expected mono audio (1-D), got shape {data.shape}")
        if not (MIN_RATE <= int(self.rate) <= MAX_RATE):
            raise AudioError(f"{where}: sample rate {self.rate} Hz is out of range")
        if data.size and not np.all(np.isfinite(data)):
            raise AudioError(f"{where}: audio contains NaN or infinite samples")
        if data.size / self.rate > MAX_SECONDS:
            seconds = data.size / self.rate
            raise AudioError(f"{where}: audio is {seconds:.0f} s long; limit {MAX_SECONDS:.0f} s")
        data = np.array(data, dtype=np.float32, copy=True)
        data.setflags(write=False)
        object.__setattr__(self, "samples", data)
        object.__setattr__(self, "rate", int(self.rate))

    @classmethod
    def silence(cls, seconds: float, rate: int = 16000) -> Audio:
        if not 0.0 <= seconds <= MAX_SECONDS:
            raise AudioError(f"silence: seconds must be in [0, {MAX_SECONDS:.0f}], got {seconds}")
        return cls(np.zeros(round(seconds * rate), dtype=np.float32), rate)

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.samples.size / self.rate

    @property
    def num_samples(self) -> int:
        return int(self.samples.size)

    def keep_encoded_wav(self, data: bytes) -> None:
        """Remember ``data`` as this value's 16-bit PCM WAV encoding (the caller vouches for
        it: ``voxeval.audio.io`` does, for bytes it decoded or encoded itself)."""
        object.__setattr__(self, "encoded_wav", data)

    def is_empty(self) -> bool:
        return self.samples.size == 0

    def with_samples(self, samples: npt.ArrayLike, rate: int | None = None) -> Audio:
        """A new value with other samples (same rate and source unless given)."""
        return Audio(np.asarray(samples, dtype=np.float32), rate or self.rate, self.source)

    def slice(self, start_s: float, end_s: float | None = None) -> Audio:
        """Samples between two times in seconds (clamped to the audio)."""
        a = max(0, round(start_s * self.rate))
        b = self.num_samples if end_s is None else min(self.num_samples, round(end_s * self.rate))
        return self.with_samples(self.samples[a : max(a, b)])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Audio):
            return NotImplemented
        return self.rate == other.rate and np.array_equal(self.samples, other.samples)

    def __hash__(self) -> int:
        return hash((self.rate, self.samples.tobytes()))

    def __repr__(self) -> str:
        return f"Audio({self.duration:.3f} s @ {self.rate} Hz, source={self.source!r})"
