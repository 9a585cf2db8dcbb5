"""Energy-based silence trimming at the start and end of a clip."""

from __future__ import annotations

import numpy as np

from voxeval.audio.checks import require_finite, require_range, require_samples
from voxeval.audio.value import Audio


def speech_bounds(
    audio: Audio, threshold_db: float = -40.0, *, frame_ms: float = 10.0
) -> tuple[float, float] | None:
    """Start and end (seconds) of the region whose frames are louder than the threshold.

    A frame counts as sound when its RMS is within ``threshold_db`` dB of the loudest
    ``frame_ms`` frame. Returns None for digital silence.
    """
    require_samples(audio, "trim_silence")
    threshold = require_range(threshold_db, "threshold_db", audio.source, -200.0, 0.0)
    ms = require_range(frame_ms, "frame_ms", audio.source, 1.0, 1000.0)
    frame = max(1, round(ms / 1000.0 * audio.rate))
    n_frames = -(-audio.num_samples // frame)
    padded = np.pad(audio.samples.astype(np.float64), (0, n_frames * frame - audio.num_samples))
    energy = np.sqrt(np.mean(np.square(padded.reshape(n_frames, frame)), axis=1))
    loudest = float(energy.max())
    if loudest == 0.0:
        return None
    loud = np.flatnonzero(energy >= loudest * 10 ** (threshold / 20.0))
    start = int(loud[0]) * frame / audio.rate
    end = min(audio.num_samples, (int(loud[-1]) + 1) * frame) / audio.rate
    return start, end


def trim_silence(
    audio: Audio, threshold_db: float = -40.0, *, pad_s: float = 0.05, frame_ms: float = 10.0
) -> Audio:
    """``audio`` without leading/trailing silence, keeping ``pad_s`` seconds on each side.

    Silence is relative to the loudest frame (see ``speech_bounds``); all-zero audio
    trims to an empty value.
    """
    pad = require_finite(pad_s, "pad_s", audio.source)
    if pad < 0:
        pad = require_range(pad, "pad_s", audio.source, 0.0, 3600.0)
    bounds = speech_bounds(audio, threshold_db, frame_ms=frame_ms)
    if bounds is None:
        return audio.with_samples(np.zeros(0, dtype=np.float32))
    start, end = bounds
    return audio.slice(max(0.0, start - pad), min(audio.duration, end + pad))
