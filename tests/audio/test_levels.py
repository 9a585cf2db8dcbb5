from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.audio.helpers import sine, white_noise
from voxeval.audio import (
    MAX_GAIN_DB,
    Audio,
    fit_peak,
    fit_rms,
    gain_db,
    loudness_lufs,
    normalise_loudness,
    normalise_peak,
    normalise_rms,
    peak,
    peak_db,
    rms,
    rms_db,
)
from voxeval.errors import AudioError


def test_rms_and_peak_of_a_sine() -> None:
    tone = sine(amp=0.5)
    assert rms(tone) == pytest.approx(0.5 / math.sqrt(2), rel=1e-4)
    assert rms_db(tone) == pytest.approx(20 * math.log10(0.5) - 3.0103, abs=1e-3)
    assert peak(tone) == pytest.approx(0.5, abs=1e-4)
    assert peak_db(tone) == pytest.approx(-6.0206, abs=1e-3)


def test_silence_levels_are_minus_infinity() -> None:
    assert rms_db(Audio.silence(0.1)) == -math.inf
    with pytest.raises(AudioError, match="silent"):
        normalise_rms(Audio.silence(0.1))


def test_gain_and_normalisation() -> None:
    noise = white_noise(amp=0.05)
    assert rms_db(gain_db(noise, 6.0)) == pytest.approx(rms_db(noise) + 6.0, abs=1e-4)
    assert rms_db(normalise_rms(noise, -20.0)) == pytest.approx(-20.0, abs=1e-4)
    assert peak_db(normalise_peak(noise, -1.0)) == pytest.approx(-1.0, abs=1e-4)
    with pytest.raises(AudioError, match="gain_db must be a finite number"):
        gain_db(noise, float("nan"))


def test_empty_audio_is_refused_with_operation_named() -> None:
    empty = Audio(np.zeros(0, dtype=np.float32), 16000, source="empty.wav")
    with pytest.raises(AudioError, match=r"empty\.wav: rms needs non-empty audio"):
        rms(empty)


@pytest.mark.parametrize(("rate", "tolerance"), [(48000, 0.02), (16000, 0.1)])
def test_full_scale_1khz_sine_reads_minus_3_lufs(rate: int, tolerance: float) -> None:
    # BS.1770: a 0 dBFS 1 kHz sine in one channel measures -3.01 LKFS (the filters are
    # specified at 48 kHz; redesigned for 16 kHz they deviate by a few hundredths of a dB).
    measured = loudness_lufs(sine(1000.0, 3.0, rate=rate, amp=1.0))
    assert measured == pytest.approx(-3.01, abs=tolerance)


def test_loudness_gating_ignores_silence() -> None:
    tone = sine(1000.0, 2.0, amp=0.1)
    padded = Audio(np.concatenate([tone.samples, np.zeros(32000, dtype=np.float32)]), 16000)
    # Ungated, doubling the length with silence would lower the level by 3 dB; gated, only
    # the few 400 ms blocks straddling the edge of the tone still count.
    assert loudness_lufs(tone) - loudness_lufs(padded) < 0.5
    assert loudness_lufs(Audio.silence(1.0)) == -math.inf


def test_normalise_loudness_hits_target() -> None:
    noise = white_noise(2.0, amp=0.02)
    assert loudness_lufs(normalise_loudness(noise, -23.0)) == pytest.approx(-23.0, abs=0.01)
    with pytest.raises(AudioError, match="-70 LUFS"):
        normalise_loudness(Audio.silence(1.0))


def test_near_silent_input_is_not_boosted_past_the_cap() -> None:
    # A 16-bit noise floor (-96 dBFS RMS) would need +76 dB to reach -20 dBFS.
    floor = white_noise(amp=10 ** (-96 / 20), seed=3)
    fit = fit_rms(floor, -20.0)
    assert fit.wanted_gain_db == pytest.approx(-20.0 - rms_db(floor), abs=1e-9)
    assert fit.wanted_gain_db > 75
    assert fit.gain_db == MAX_GAIN_DB == 30.0 and fit.capped
    assert rms_db(fit.audio) == pytest.approx(rms_db(floor) + 30.0, abs=1e-3)
    assert fit.details()["near_silent"] is True
    assert rms_db(normalise_rms(floor, -20.0)) == pytest.approx(rms_db(fit.audio), abs=1e-6)
    # loudness (above its -70 LUFS gate) and peak normalisation use the same cap
    faint = white_noise(amp=10 ** (-62 / 20), seed=4)
    assert loudness_lufs(faint) < -23.0 - 30.0
    assert normalise_loudness(faint, -23.0) == gain_db(faint, 30.0)
    assert peak_db(normalise_peak(floor, -1.0)) == pytest.approx(peak_db(floor) + 30.0, abs=1e-3)
    uncapped = fit_rms(floor, -20.0, max_gain_db=None)
    assert not uncapped.capped and rms_db(uncapped.audio) == pytest.approx(-20.0, abs=1e-3)


def test_ordinary_input_is_unaffected_by_the_cap() -> None:
    quiet = white_noise(amp=0.01)  # -40 dBFS: +20 dB to -20 dBFS, within the cap
    fit = fit_rms(quiet, -20.0)
    assert not fit.capped and fit.details()["near_silent"] is False
    assert rms_db(fit.audio) == pytest.approx(-20.0, abs=1e-4)
    loud = fit_rms(sine(amp=0.9), -20.0)  # attenuation is never capped
    assert loud.gain_db < 0 and rms_db(loud.audio) == pytest.approx(-20.0, abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    level=st.floats(min_value=-95.0, max_value=-1.0),
    target=st.floats(min_value=-40.0, max_value=-3.0),
    cap=st.floats(min_value=0.0, max_value=60.0),
)
def test_applied_gain_is_the_wanted_gain_clipped_to_the_cap(
    level: float, target: float, cap: float
) -> None:
    noise = white_noise(amp=1.0, seed=1)
    audio = gain_db(noise, level - rms_db(noise))
    fit = fit_rms(audio, target, max_gain_db=cap)
    assert fit.gain_db == pytest.approx(min(target - fit.input_db, cap), abs=1e-9)
    assert rms_db(fit.audio) == pytest.approx(min(target, fit.input_db + cap), abs=1e-3)
    assert fit.capped == (target - fit.input_db > cap)


def test_each_fit_names_its_own_action_on_silence_and_hits_its_target() -> None:
    with pytest.raises(AudioError, match="cannot normalise RMS: the audio is silent"):
        fit_rms(Audio.silence(0.1))
    with pytest.raises(AudioError, match="cannot normalise peak: the audio is silent"):
        fit_peak(Audio.silence(0.1))
    noise = white_noise(amp=0.05)
    assert peak_db(fit_peak(noise, -3.0).audio) == pytest.approx(-3.0, abs=1e-4)
    assert rms_db(fit_rms(noise, -30.0).audio) == pytest.approx(-30.0, abs=1e-4)
