"""Embedded Piper voice: audio, options, catalogue."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.errors import ConfigError
from voxeval.providers import create_provider
from voxeval.providers.tts_piper import PiperTTS

pytestmark = pytest.mark.models


def test_piper_speaks_at_22050_hz() -> None:
    tts = create_provider("tts", "piper")
    audio = tts.synthesize("Good morning, how can I help you today?")
    assert audio.rate == 22050
    assert 1.0 < audio.duration < 5.0
    assert float(np.sqrt(np.mean(audio.samples**2))) > 0.02
    assert tts.voices()[0].name == "piper:joe"


def test_length_scale_and_sentence_silence_change_duration() -> None:
    text = "One sentence here. And another one there."
    normal = PiperTTS(sentence_silence=0.0).synthesize(text)
    slow = PiperTTS(length_scale=1.5, sentence_silence=0.0).synthesize(text)
    gap = PiperTTS(sentence_silence=1.0).synthesize(text)
    assert slow.duration > 1.3 * normal.duration
    assert gap.duration == pytest.approx(normal.duration + 1.0, abs=0.3)


def test_piper_rejects_unknown_voice_and_empty_text() -> None:
    tts = PiperTTS()
    with pytest.raises(ConfigError, match="only 'joe'"):
        tts.synthesize("hi", voice="amy")
    with pytest.raises(ConfigError, match="empty"):
        tts.synthesize("   ")
    assert tts.identity()["voice"] == "en_US-joe-medium"
