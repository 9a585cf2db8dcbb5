from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio import segments_from_probabilities, speech_mask, speech_seconds
from voxeval.errors import AudioError
from voxeval.providers.base import SpeechSegment

FRAME = 0.032


def _probs(pattern: str) -> np.ndarray:
    """'.' = 0.05, '#' = 0.95, '~' = 0.45 (between the two thresholds)."""
    return np.array([{".": 0.05, "#": 0.95, "~": 0.45}[c] for c in pattern])


def test_one_segment_with_padding() -> None:
    probs = _probs("." * 10 + "#" * 20 + "." * 10)
    segs = segments_from_probabilities(probs, FRAME, speech_pad_ms=30, min_speech_ms=100)
    assert segs == [SpeechSegment(round(10 * FRAME - 0.03, 4), round(30 * FRAME + 0.03, 4))]


def test_short_gaps_are_bridged_and_long_gaps_split() -> None:
    probs = _probs("#" * 20 + "." * 2 + "#" * 20 + "." * 10 + "#" * 20)
    segs = segments_from_probabilities(
        probs, FRAME, min_silence_ms=100, speech_pad_ms=0, min_speech_ms=0
    )
    assert [(s.start, s.end) for s in segs] == [
        (0.0, round(42 * FRAME, 4)),
        (round(52 * FRAME, 4), round(72 * FRAME, 4)),
    ]


def test_hysteresis_keeps_speech_through_middling_probabilities() -> None:
    probs = _probs("." * 5 + "#" * 10 + "~" * 10 + "." * 10)
    segs = segments_from_probabilities(probs, FRAME, speech_pad_ms=0, min_speech_ms=0)
    assert len(segs) == 1
    assert segs[0].end == pytest.approx(25 * FRAME, abs=1e-4)


def test_short_blips_dropped_and_padding_clamped_to_duration() -> None:
    probs = _probs("#" * 3 + "." * 20 + "#" * 20)
    segs = segments_from_probabilities(
        probs, FRAME, min_speech_ms=250, speech_pad_ms=500, duration_s=43 * FRAME
    )
    assert len(segs) == 1
    assert segs[0].end == pytest.approx(43 * FRAME, abs=1e-4)
    assert segs[0].start == pytest.approx(23 * FRAME - 0.5, abs=1e-4)


def test_no_speech_and_bad_input() -> None:
    assert segments_from_probabilities(np.zeros(100), FRAME) == []
    with pytest.raises(AudioError, match="finite"):
        segments_from_probabilities(np.array([0.1, np.nan]), FRAME)
    with pytest.raises(AudioError, match="threshold"):
        segments_from_probabilities(np.zeros(3), FRAME, threshold=1.5)


def test_mask_and_total() -> None:
    segs = [SpeechSegment(0.1, 0.3), SpeechSegment(0.5, 0.6)]
    mask = speech_mask(segs, 10, 0.1)
    assert mask.tolist() == [False, True, True, False, False, True] + [False] * 4
    assert speech_seconds(segs) == pytest.approx(0.3)
