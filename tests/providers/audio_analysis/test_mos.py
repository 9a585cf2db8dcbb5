from __future__ import annotations

import math

import numpy as np
import pytest

from tests.providers.audio_analysis.speech_samples import speech_clip
from voxeval.audio import Audio, concatenate, mix_at_snr
from voxeval.config import ProviderSpec
from voxeval.errors import AudioError, ProviderUnavailable
from voxeval.providers import MOS, MOSResult, availability, create_provider

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Audio:
    return speech_clip(tmp_path_factory.mktemp("mos"))


@pytest.fixture(scope="module")
def dnsmos() -> MOS:
    provider: MOS = create_provider("mos", "dnsmos")
    return provider


@pytest.fixture(scope="module")
def clean(dnsmos: MOS, speech: Audio) -> MOSResult:
    """DNSMOS of the (short, padded) clean sentence: read by two tests."""
    return dnsmos.predict(speech)


def test_dnsmos_clean_speech_beats_noisy_speech(
    dnsmos: MOS, speech: Audio, clean: MOSResult
) -> None:
    white = Audio(np.random.default_rng(0).standard_normal(16000).astype(np.float32), 16000)
    noisy = dnsmos.predict(mix_at_snr(speech, white, 0.0, seed=0))
    assert isinstance(clean, MOSResult) and clean.model == "dnsmos-p835"
    assert set(clean.scores) == {"sig", "bak", "ovrl", "p808"}
    assert clean.overall == clean.scores["ovrl"]
    assert all(1.0 <= v <= 5.0 for v in clean.scores.values())
    assert clean.overall > noisy.overall + 0.5
    assert clean.scores["bak"] > noisy.scores["bak"] + 1.0


def test_dnsmos_records_padding_of_short_clips(
    dnsmos: MOS, speech: Audio, clean: MOSResult
) -> None:
    assert speech.duration < 9.01
    assert "repeated" in clean.details["padding"]
    assert clean.details["windows"] >= 1
    # just over one window (9.01 s): enough copies of the sentence, no more
    copies = math.ceil(9.5 / (speech.duration + 0.3))
    long = dnsmos.predict(concatenate([speech] * copies, silence_s=0.3))
    assert long.details["input_seconds"] > 9.01 and "padding" not in long.details


def test_dnsmos_matches_the_reference_package(dnsmos: MOS, speech: Audio) -> None:
    pytest.importorskip("librosa")
    dnsmos_ref = pytest.importorskip("speechmos.dnsmos")
    from voxeval.audio import resample

    # 10 s is scored as one window. (On longer clips the reference sometimes drops a window
    # through float rounding of its window bounds; voxeval keeps every window.)
    clip = resample(concatenate([speech, speech, speech], silence_s=0.5), 16000).slice(0, 10.0)
    ref = dnsmos_ref.run(np.clip(clip.samples, -1, 1), 16000)
    ours = dnsmos.predict(clip)
    assert ours.details["windows"] == 1
    assert ours.scores["ovrl"] == pytest.approx(float(ref["ovrl_mos"]), abs=1e-3)
    assert ours.scores["p808"] == pytest.approx(float(ref["p808_mos"]), abs=1e-3)


def test_dnsmos_refuses_too_short_audio(dnsmos: MOS) -> None:
    tiny = Audio(np.full(1600, 0.1, dtype=np.float32), 16000, source="reply-3.wav")
    with pytest.raises(AudioError, match=r"reply-3\.wav: 0\.10 s is too short"):
        dnsmos.predict(tiny)


def test_distillmos_reports_why_it_cannot_run() -> None:
    avail = availability("mos", ProviderSpec(provider="distillmos"))
    if avail.available:
        pytest.skip("distillmos is installed here; covered by the torch-extra test")
    assert "torch" in avail.reason or "distillmos" in avail.reason
    with pytest.raises(ProviderUnavailable, match="distillmos"):
        create_provider("mos", "distillmos")


@pytest.mark.slow
def test_distillmos_ranks_clean_above_noisy(speech: Audio) -> None:
    avail = availability("mos", ProviderSpec(provider="distillmos"))
    if not avail.available:
        pytest.skip(f"distillmos unavailable: {avail.reason}")
    model = create_provider("mos", "distillmos")
    white = Audio(np.random.default_rng(0).standard_normal(16000).astype(np.float32), 16000)
    clean = model.predict(speech)
    noisy = model.predict(mix_at_snr(speech, white, 0.0, seed=0))
    assert clean.model == "distillmos" and set(clean.scores) == {"mos"}
    assert 1.0 <= noisy.overall < clean.overall <= 5.0
    assert clean.overall - noisy.overall > 0.5
    assert "padding" in clean.details  # espeak sentence is shorter than the 7.68 s window
