"""flite voices through the Debian binary."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers import availability, create_provider
from voxeval.providers.tts.tts_flite import FLITE_VOICES, flite_catalogue

needs_flite = pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="flite")).available,
    reason="flite is not installed",
)


def test_catalogue_metadata() -> None:
    voices = {v.name: v for v in flite_catalogue()}
    assert set(voices) == {f"flite:{n}" for n in FLITE_VOICES}
    assert voices["flite:awb"].accent == "scottish"
    assert voices["flite:slt"].gender == "female"
    assert voices["flite:rms"].details["mos_range"] == [2.6, 3.1]


@needs_flite
@pytest.mark.parametrize("voice", sorted(FLITE_VOICES))
def test_each_flite_voice_produces_audio(voice: str) -> None:
    audio = create_provider("tts", "flite").synthesize("Thank you for calling.", voice=voice)
    assert audio.rate == 16000
    assert audio.duration > 0.5
    assert float(np.max(np.abs(audio.samples))) > 0.05
    assert audio.source == f"flite:{voice}"


@needs_flite
def test_unknown_flite_voice() -> None:
    with pytest.raises(ConfigError, match="known: slt"):
        create_provider("tts", "flite").synthesize("hi", voice="kal99")
