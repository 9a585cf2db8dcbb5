from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.audio.helpers import sine, snr_db, white_noise
from voxeval.audio import (
    Audio,
    babble,
    concatenate,
    fit_to_length,
    mix_at_ratio,
    mix_at_snr,
    noise_at_snr,
    overlay,
    peak,
    ratio_to_snr_db,
    rms,
)
from voxeval.errors import AudioError


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    snr=st.floats(-20.0, 40.0),
    speech_level=st.floats(1e-3, 1.0),
    noise_level=st.floats(1e-3, 1.0),
    speech_len=st.integers(64, 8000),
    noise_len=st.integers(64, 12000),
)
def test_mix_at_snr_lands_within_0_1_db(
    seed: int,
    snr: float,
    speech_level: float,
    noise_level: float,
    speech_len: int,
    noise_len: int,
) -> None:
    rng = np.random.default_rng(seed)
    # Speech-like: a random waveform under a random envelope spanning 40 dB, with pauses.
    levels = 10 ** rng.uniform(-2, 0, speech_len // 64 + 1)
    levels[rng.random(levels.size) < 0.3] = 0.0
    levels[0] = 1.0  # never entirely silent (silent speech is an error, tested below)
    envelope = np.repeat(levels, 64)[:speech_len]
    speech = Audio(speech_level * envelope * rng.standard_normal(speech_len), 8000, "speech")
    noise = Audio(noise_level * rng.uniform(-1, 1, noise_len), 8000, "noise")
    mixed = mix_at_snr(speech, noise, snr, seed=seed, avoid_clipping=False)
    assert abs(snr_db(speech, mixed) - snr) < 0.1


def test_mix_at_snr_resamples_noise_and_keeps_speech_level() -> None:
    speech = sine(300.0, 1.0, rate=16000, amp=0.3)
    noise = white_noise(0.4, rate=8000, amp=0.5)
    mixed = mix_at_snr(speech, noise, 10.0, seed=3)
    assert mixed.rate == 16000 and mixed.num_samples == speech.num_samples
    assert snr_db(speech, mixed) == pytest.approx(10.0, abs=0.1)
    scaled = noise_at_snr(speech, noise, 10.0, seed=3)
    np.testing.assert_allclose(mixed.samples, speech.samples + scaled.samples, atol=1e-6)


def test_mix_avoids_clipping_without_changing_snr() -> None:
    speech = sine(300.0, amp=0.9)
    mixed = mix_at_snr(speech, white_noise(amp=0.3), 0.0, seed=1)
    assert peak(mixed) <= 0.99 + 1e-6
    scale = float(np.dot(mixed.samples, speech.samples) / np.dot(speech.samples, speech.samples))
    residual = mixed.samples / scale - speech.samples
    assert 20 * math.log10(rms(speech) / float(np.sqrt(np.mean(residual**2)))) == pytest.approx(
        0.0, abs=0.1
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_mix_rejects_non_finite_snr(bad: float) -> None:
    with pytest.raises(AudioError, match="snr_db must be a finite number"):
        mix_at_snr(sine(), white_noise(), bad)


def test_mix_rejects_silent_or_empty_inputs() -> None:
    with pytest.raises(AudioError, match="noise is silent"):
        mix_at_snr(sine(), Audio.silence(1.0), 5.0)
    with pytest.raises(AudioError, match="speech is silent"):
        mix_at_snr(Audio.silence(1.0), white_noise(), 5.0)
    empty = Audio(np.zeros(0, dtype=np.float32), 16000, "empty.wav")
    with pytest.raises(AudioError, match=r"empty\.wav: mix_at_snr needs non-empty audio"):
        mix_at_snr(empty, white_noise(), 5.0)


def test_mix_at_ratio_half_amplitude_is_6_db() -> None:
    assert ratio_to_snr_db(0.5, 1.0) == pytest.approx(6.0206, abs=1e-4)
    speech = sine(300.0, amp=0.3)
    mixed = mix_at_ratio(speech, white_noise(amp=0.01), 0.5, 1.0, seed=0)
    assert snr_db(speech, mixed) == pytest.approx(6.0206, abs=0.01)


def test_mix_at_ratio_peak_reference() -> None:
    speech = sine(300.0, amp=0.4)
    noise = sine(1000.0, amp=0.05)
    mixed = mix_at_ratio(speech, noise, 0.5, 1.0, reference="peak")
    added = mixed.samples - speech.samples
    assert float(np.max(np.abs(added))) == pytest.approx(0.2, rel=0.01)
    with pytest.raises(AudioError, match="reference must be"):
        mix_at_ratio(speech, noise, reference="lufs")  # type: ignore[arg-type]


def test_fit_to_length_loops_trims_and_is_seeded() -> None:
    noise = Audio(np.arange(1, 1001, dtype=np.float32) / 1000, 1000)
    looped = fit_to_length(noise, 2500)
    assert looped.num_samples == 2500
    np.testing.assert_array_equal(looped.samples[1000:2000], noise.samples)
    padded = fit_to_length(noise, 1500, loop=False)
    assert float(np.abs(padded.samples[1000:]).max()) == 0.0
    a = fit_to_length(noise, 300, seed=7)
    assert a == fit_to_length(noise, 300, seed=7)
    assert a != fit_to_length(noise, 300, seed=8)
    start = round(float(a.samples[0]) * 1000) - 1
    np.testing.assert_array_equal(a.samples, noise.samples[start : start + 300])


def test_overlay_places_event_at_offset() -> None:
    base = Audio.silence(1.0, rate=1000)
    event = Audio(np.ones(100, dtype=np.float32), 1000)
    out = overlay(base, event, 0.25, gain=0.5)
    assert np.flatnonzero(out.samples).tolist() == list(range(250, 350))
    assert float(out.samples[300]) == pytest.approx(0.5)
    cut = overlay(base, event, 0.95)
    assert cut.num_samples == 1000 and np.count_nonzero(cut.samples) == 50
    longer = overlay(base, event, 0.95, extend=True)
    assert longer.num_samples == 1050
    with pytest.raises(AudioError, match="at_s must be in"):
        overlay(base, event, 1.5)


def test_concatenate_with_silences_and_rate_conversion() -> None:
    a = sine(rate=16000, seconds=0.5)
    b = sine(rate=8000, seconds=0.25)
    out = concatenate([a, b, a], silence_s=0.1)
    assert out.rate == 16000
    assert out.duration == pytest.approx(0.5 + 0.1 + 0.25 + 0.1 + 0.5)
    gap = out.samples[8000:9600]
    assert float(np.abs(gap).max()) == 0.0
    with pytest.raises(AudioError, match="no audio parts"):
        concatenate([])


def test_babble_mixes_three_distinct_clips_deterministically() -> None:
    clips = [sine(200.0 + 100 * i, 0.5 + 0.1 * i, amp=0.1 * (i + 1)) for i in range(5)]
    mix = babble(clips, n=3, seed=11)
    assert mix == babble(clips, n=3, seed=11)
    assert mix != babble(clips, n=3, seed=12)
    assert 20 * math.log10(rms(mix)) == pytest.approx(-25.0, abs=0.01)
    spectrum = np.abs(np.fft.rfft(mix.samples))
    freqs = np.fft.rfftfreq(mix.num_samples, 1 / mix.rate)
    strong = {round(f / 100) * 100 for f in freqs[spectrum > 0.2 * spectrum.max()]}
    assert len(strong) == 3  # three different voices are audible
    with pytest.raises(AudioError, match="at least 3 clips"):
        babble(clips[:2], n=3)


def test_limit_peak_scales_only_a_peak_over_its_threshold_to_the_headroom() -> None:
    from voxeval.audio.mix import HEADROOM_PEAK, limit_peak

    loud = np.array([0.5, -2.0, 1.0])
    assert np.allclose(limit_peak(loud), loud * (HEADROOM_PEAK / 2.0))
    quiet = np.array([0.995, -0.2])
    assert limit_peak(quiet) is quiet  # under full scale: unchanged
    assert np.allclose(limit_peak(quiet, above=HEADROOM_PEAK), quiet * (HEADROOM_PEAK / 0.995))
    assert limit_peak(np.array([], dtype=np.float64)).size == 0
