from __future__ import annotations

import numpy as np
import pytest

from tests.audio.helpers import sine, snr_db, white_noise
from voxeval.audio import (
    Audio,
    degrade_connection,
    gain_curve,
    gain_fluctuation,
    lost_frames,
    mulaw_decode,
    mulaw_encode,
    mulaw_roundtrip,
    packet_loss,
    rms,
    telephone_band,
)
from voxeval.errors import AudioError


def test_mulaw_codes_are_8_bit_and_invertible() -> None:
    x = np.linspace(-1, 1, 1001)
    codes = mulaw_encode(x)
    assert codes.dtype == np.uint8 and codes.min() == 0 and codes.max() == 255
    # Companding: quiet samples get finer steps than loud ones.
    back = mulaw_decode(codes)
    quiet, loud = np.abs(x) < 0.05, np.abs(x) > 0.5
    assert np.abs(back - x)[quiet].max() < np.abs(back - x)[loud].max() / 5


@pytest.mark.parametrize("rate", [8000, 16000, 22050])
def test_mulaw_roundtrip_snr_above_30_db_on_a_tone(rate: int) -> None:
    tone = sine(440.0, 1.0, rate=rate, amp=0.5)
    out = mulaw_roundtrip(tone)
    assert out.rate == rate and out.num_samples == tone.num_samples
    # Skip the resampler's edge transients.
    edge = rate // 50
    inner = Audio(tone.samples[edge:-edge], rate)
    assert snr_db(inner, Audio(out.samples[edge:-edge], rate)) > 30.0


def test_mulaw_roundtrip_removes_content_above_4_khz() -> None:
    high = sine(6000.0, 0.5, rate=16000, amp=0.5)
    assert rms(mulaw_roundtrip(high)) < 0.01 * rms(high)


def test_packet_loss_drops_about_3_percent_of_20ms_frames() -> None:
    speech = white_noise(60.0, rate=8000, amp=0.2)
    dropped = lost_frames(speech, 0.03, seed=5)
    assert len(dropped) / 3000 == pytest.approx(0.03, abs=0.01)
    out = packet_loss(speech, 0.03, seed=5)
    frames = out.samples.reshape(3000, 160)
    silent = np.flatnonzero(np.abs(frames).max(axis=1) == 0)
    np.testing.assert_array_equal(silent, dropped)
    # Deterministic per seed, different across seeds.
    assert out == packet_loss(speech, 0.03, seed=5)
    assert out != packet_loss(speech, 0.03, seed=6)


def test_packet_loss_extremes_and_validation() -> None:
    audio = white_noise(1.0)
    assert packet_loss(audio, 0.0) == audio
    assert float(np.abs(packet_loss(audio, 1.0).samples).max()) == 0.0
    with pytest.raises(AudioError, match="packet loss rate must be in"):
        packet_loss(audio, 1.5)
    with pytest.raises(AudioError, match="packet loss rate must be a finite"):
        packet_loss(audio, float("nan"))


def test_gain_fluctuation_stays_in_range_and_is_seeded() -> None:
    audio = Audio(np.full(16000 * 5, 0.5, dtype=np.float32), 16000)
    curve = gain_curve(audio, 0.5, 1.2, seed=3)
    assert curve.min() >= 0.5 and curve.max() <= 1.2
    assert curve.max() - curve.min() > 0.1  # it does fluctuate
    assert np.abs(np.diff(curve)).max() < 0.7 / 16000 * 1.01  # ramps, no jumps
    out = gain_fluctuation(audio, 0.5, 1.2, seed=3)
    np.testing.assert_allclose(out.samples, 0.5 * curve, rtol=1e-6)
    assert out == gain_fluctuation(audio, 0.5, 1.2, seed=3)
    with pytest.raises(AudioError, match="high gain"):
        gain_fluctuation(audio, 1.2, 0.5)


def test_telephone_band_passes_voice_band_only() -> None:
    def gain_at(freq: float) -> float:
        tone = sine(freq, 1.0, rate=16000, amp=0.5)
        out = telephone_band(tone)
        return rms(Audio(out.samples[4000:], 16000)) / rms(Audio(tone.samples[4000:], 16000))

    assert gain_at(1000.0) == pytest.approx(1.0, abs=0.05)
    assert gain_at(100.0) < 0.1
    assert gain_at(6000.0) < 0.1
    with pytest.raises(AudioError, match="needs a sample rate above"):
        telephone_band(sine(rate=6000))


def test_degrade_connection_chain_is_seeded() -> None:
    speech = white_noise(2.0, rate=16000, amp=0.2)
    a = degrade_connection(speech, seed=1)
    assert a == degrade_connection(speech, seed=1)
    assert a != degrade_connection(speech, seed=2)
    assert a.rate == 16000 and a.num_samples == speech.num_samples
