"""Turning per-frame speech probabilities (from a VAD) into speech segments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from voxeval.errors import AudioError


@dataclass(frozen=True)
class SpeechSegment:
    start: float
    end: float


def segments_from_probabilities(
    probabilities: npt.ArrayLike,
    frame_s: float,
    *,
    duration_s: float | None = None,
    threshold: float = 0.5,
    neg_threshold: float | None = None,
    min_speech_ms: float = 250.0,
    min_silence_ms: float = 100.0,
    speech_pad_ms: float = 30.0,
) -> list[SpeechSegment]:
    """Speech segments from frame ``i`` probabilities covering ``[i*frame_s, (i+1)*frame_s)``.

    Hysteresis: speech starts at a frame with p >= ``threshold`` and ends only after
    ``min_silence_ms`` of frames with p < ``neg_threshold`` (default threshold - 0.15).
    Segments shorter than ``min_speech_ms`` are dropped; the rest are widened by
    ``speech_pad_ms`` on both sides, clamped to ``[0, duration_s]`` and merged if they touch.
    """

    probs = np.asarray(probabilities, dtype=np.float64)
    if probs.ndim != 1 or not np.all(np.isfinite(probs)):
        raise AudioError("speech probabilities must be a 1-D array of finite numbers")
    if not frame_s > 0:
        raise AudioError(f"frame_s must be positive, got {frame_s}")
    if not 0.0 < threshold <= 1.0:
        raise AudioError(f"VAD threshold must be in (0, 1], got {threshold}")
    low = max(threshold - 0.15, 0.01) if neg_threshold is None else neg_threshold
    total = probs.size * frame_s if duration_s is None else float(duration_s)
    min_silence_frames = max(1, round(min_silence_ms / 1000.0 / frame_s))

    raw: list[tuple[int, int]] = []
    start: int | None = None
    silent_since: int | None = None
    for i, p in enumerate(probs):
        if start is None:
            if p >= threshold:
                start, silent_since = i, None
            continue
        if p >= low:
            silent_since = None
            continue
        if silent_since is None:
            silent_since = i
        if i - silent_since + 1 >= min_silence_frames:
            raw.append((start, silent_since))
            start, silent_since = None, None
    if start is not None:
        raw.append((start, silent_since if silent_since is not None else probs.size))

    pad = speech_pad_ms / 1000.0
    merged: list[list[float]] = []
    for a, b in raw:
        if (b - a) * frame_s < min_speech_ms / 1000.0:
            continue
        seg_start = max(0.0, a * frame_s - pad)
        seg_end = min(total, b * frame_s + pad)
        if merged and seg_start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], seg_end)
        else:
            merged.append([seg_start, seg_end])
    return [SpeechSegment(round(a, 4), round(b, 4)) for a, b in merged if b > a]


def speech_mask(
    segments: Sequence[SpeechSegment], num_frames: int, frame_s: float
) -> npt.NDArray[np.bool_]:
    """Boolean per frame: True where the frame's centre lies inside a segment."""
    centres = (np.arange(num_frames) + 0.5) * frame_s
    mask = np.zeros(num_frames, dtype=bool)
    for seg in segments:
        mask |= (centres >= seg.start) & (centres < seg.end)
    return mask


def speech_seconds(segments: Sequence[SpeechSegment]) -> float:
    """Total duration covered by ``segments`` (assumed non-overlapping)."""
    return float(sum(seg.end - seg.start for seg in segments))
