"""Loudspeaker playback: band limits (golden gains), soft clipping, level and recapture."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import signal

from tests.audio.helpers import sine, white_noise
from voxeval.audio import Audio, rms_db
from voxeval.audio.loudspeaker import (
    DEVICE_PRESETS,
    band_gain_db,
    band_sos,
    device_band,
    device_preset,
    play_through,
    playback,
    soft_clip,
)
from voxeval.audio.room_acoustics import room_response, room_setup
from voxeval.errors import AudioError

RATE = 16000


def tone_level_db(audio: Audio, freq: float, skip_s: float = 0.25) -> float:
    """Amplitude (dB re 1.0) of the ``freq`` component after the filter has settled: a least
    squares fit of a sine and a cosine at that frequency."""
    x = audio.samples[round(skip_s * audio.rate) :].astype(np.float64)
    t = (np.arange(x.size) + round(skip_s * audio.rate)) / audio.rate
    basis = np.column_stack([np.sin(2 * np.pi * freq * t), np.cos(2 * np.pi * freq * t)])
    (a, b), *_ = np.linalg.lstsq(basis, x, rcond=None)
    return 20 * math.log10(math.hypot(a, b))


def test_phone_band_gains_are_the_butterworth_golden_values() -> None:
    phone = device_preset("phone")
    # tan-warped Butterworth, order 4 per edge, 300-3400 Hz at 16 kHz (worked by hand)
    assert band_gain_db(phone, RATE, 100.0) == pytest.approx(-38.21, abs=0.01)
    assert band_gain_db(phone, RATE, 1000.0) == pytest.approx(0.0, abs=0.01)
    assert band_gain_db(phone, RATE, 6000.0) == pytest.approx(-38.89, abs=0.01)
    # the closed form is the filter scipy designs
    freqs = np.array([100.0, 300.0, 1000.0, 3400.0, 6000.0])
    _, response = signal.sosfreqz(band_sos(phone, RATE), worN=freqs, fs=RATE)
    expected = [band_gain_db(phone, RATE, f) for f in freqs]
    assert 20 * np.log10(np.abs(response)) == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize(("freq", "gain"), [(100.0, -38.21), (1000.0, 0.0), (6000.0, -38.89)])
def test_phone_band_attenuates_tones_by_the_expected_db(freq: float, gain: float) -> None:
    tone = sine(freq, seconds=1.0, amp=0.5)
    out = device_band(tone, "phone")
    measured = tone_level_db(out, freq) - 20 * math.log10(0.5)
    assert measured == pytest.approx(gain, abs=0.1)


def test_wider_devices_pass_more_and_drop_a_low_pass_at_nyquist() -> None:
    laptop, speaker = device_preset("laptop"), device_preset("smart_speaker")
    assert band_gain_db(laptop, RATE, 6000.0) > -1.0  # laptops reach 6 kHz, phones not
    assert band_gain_db(speaker, RATE, 100.0) > -3.0
    # 12 kHz is above what 16 kHz audio holds: only the high pass is applied
    assert band_sos(speaker, RATE).shape == (1, 6)
    assert band_gain_db(speaker, RATE, 7800.0) == pytest.approx(0.0, abs=0.01)
    assert band_sos(laptop, 8000).shape == (2, 6)  # 7 kHz low pass dropped at 8 kHz too
    narrow = device_band(sine(2000.0, amp=0.5, rate=8000), "laptop")
    assert tone_level_db(narrow, 2000.0) == pytest.approx(20 * math.log10(0.5), abs=0.1)


def test_soft_clip_spares_quiet_samples_and_compresses_the_peak() -> None:
    x = np.full(100, 0.01)
    x[50] = 1.0
    knee = device_preset("phone").knee
    y = soft_clip(x, knee)
    assert y[0] == pytest.approx(0.01, rel=1e-3)
    assert y[50] == pytest.approx(knee * math.tanh(1 / knee))
    assert 20 * math.log10(y[50]) == pytest.approx(-3.4, abs=0.05)
    # the same shape whatever the level: the knee follows the peak
    assert soft_clip(x * 0.1, knee) == pytest.approx(y * 0.1)
    assert np.all(soft_clip(np.zeros(10), knee) == 0.0)
    with pytest.raises(AudioError, match="knee"):
        soft_clip(x, 0.0)


def test_playback_distorts_a_loud_tone_and_keeps_the_level() -> None:
    tone = sine(1000.0, seconds=1.0, amp=0.3)
    out = play_through(tone, "phone")
    assert rms_db(out) == pytest.approx(rms_db(tone), abs=0.01)
    # odd harmonic from the soft clipping, inside the phone band
    third = tone_level_db(out, 3000.0) - tone_level_db(out, 1000.0)
    assert -40.0 < third < -15.0
    clean = tone_level_db(tone, 3000.0) - tone_level_db(tone, 1000.0)
    assert clean < -100.0


def test_playback_removes_bass_and_treble_from_broadband_sound() -> None:
    noise = white_noise(2.0, amp=0.1, seed=4)
    out = play_through(noise, "phone")
    f, before = signal.welch(noise.samples, fs=RATE, nperseg=1024)
    _, after = signal.welch(out.samples, fs=RATE, nperseg=1024)
    band = lambda lo, hi, p: 10 * np.log10(np.mean(p[(f >= lo) & (f < hi)]))  # noqa: E731
    change = lambda lo, hi: band(lo, hi, after) - band(lo, hi, before)  # noqa: E731
    assert change(50, 150) < change(800, 2000) - 25.0
    assert change(5500, 7500) < change(800, 2000) - 25.0


def test_recapture_adds_the_room_and_is_seeded() -> None:
    voice = white_noise(0.5, amp=0.1, seed=2)
    dry = playback(voice, "laptop")
    assert dry == play_through(voice, "laptop") and dry.num_samples == voice.num_samples
    roomed = playback(voice, "laptop", room="small_office", seed=3)
    response = room_response(room_setup("small_office"), RATE, 3)
    assert roomed.num_samples == voice.num_samples + response.ir.size - 1
    assert roomed == playback(voice, "laptop", room="small_office", seed=3)
    assert roomed != playback(voice, "laptop", room="small_office", seed=4)
    cut = playback(voice, "laptop", room="small_office", seed=3, tail="cut")
    assert cut.num_samples == voice.num_samples


def test_bad_devices_are_refused_by_name() -> None:
    with pytest.raises(AudioError, match="unknown device 'gramophone'"):
        play_through(sine(), "gramophone")
    with pytest.raises(AudioError, match="need a room"):
        playback(sine(), "phone", distance_m=1.0)
    low_rate = device_band(sine(200.0, rate=1000), "phone")  # 1 kHz audio: high pass only
    assert low_rate.num_samples == 1000
    assert set(DEVICE_PRESETS) == {"phone", "laptop", "smart_speaker"}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1.0, 1.0, width=32), min_size=1, max_size=2000),
    st.sampled_from(sorted(DEVICE_PRESETS)),
)
def test_any_input_gives_finite_audio_of_the_same_length(values: list[float], device: str) -> None:
    dry = Audio(np.array(values, np.float32), RATE)
    out = play_through(dry, device)
    assert out.num_samples == dry.num_samples
    assert np.all(np.isfinite(out.samples))
    assert float(np.max(np.abs(out.samples))) <= 0.99 + 1e-6
