"""Generated event sounds: each has the signature the renderer's tests rely on."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio.event_sounds import (
    ALARM_TONE_HZ,
    EVENT_SOUNDS,
    RING_TONES_HZ,
    render_event,
)

RATE = 24000


def _peak_frequencies(samples: np.ndarray, count: int) -> list[float]:
    spectrum = np.abs(np.fft.rfft(samples))
    freqs = np.fft.rfftfreq(samples.size, 1 / RATE)
    found: list[float] = []
    for index in np.argsort(spectrum)[::-1]:
        if all(abs(freqs[index] - f) > 20 for f in found):
            found.append(float(freqs[index]))
        if len(found) == count:
            break
    return sorted(found)


@pytest.mark.parametrize("name", sorted(EVENT_SOUNDS))
def test_events_are_seeded_and_peak_normalised(name: str) -> None:
    first = render_event(name, 5, RATE)
    assert np.array_equal(first.samples, render_event(name, 5, RATE).samples)
    assert float(np.max(np.abs(first.samples))) == pytest.approx(0.9, abs=1e-6)
    assert first.rate == RATE and first.source == f"generated:{name}"


def test_phone_ring_is_two_tones_in_a_ring_ring_cadence() -> None:
    ring = render_event("phone_ring", 1, RATE)
    assert ring.duration == pytest.approx(2.6, abs=0.01)
    peaks = _peak_frequencies(ring.samples.astype(np.float64), 2)
    assert peaks == pytest.approx(list(RING_TONES_HZ), abs=2.0)
    # silent between the two rings of a pair (0.4 s on, 0.2 s off)
    gap = ring.samples[round(0.42 * RATE) : round(0.58 * RATE)]
    assert float(np.max(np.abs(gap))) == 0.0


def test_alarm_beeps_at_3khz() -> None:
    alarm = render_event("alarm_beeps", 1, RATE)
    assert _peak_frequencies(alarm.samples.astype(np.float64), 1) == pytest.approx(
        [ALARM_TONE_HZ], abs=5.0
    )
    # six beeps: six rising edges of the envelope
    on = np.abs(alarm.samples) > 0.05
    frames = on[: on.size // 240 * 240].reshape(-1, 240).any(axis=1)
    assert int(np.sum(frames[1:] & ~frames[:-1])) + int(frames[0]) == 6


def test_thunder_lives_in_the_low_band_and_keyboard_in_the_high_band() -> None:
    def share(samples: np.ndarray, low: float, high: float) -> float:
        power = np.abs(np.fft.rfft(samples.astype(np.float64))) ** 2
        freqs = np.fft.rfftfreq(samples.size, 1 / RATE)
        return float(power[(freqs >= low) & (freqs < high)].sum() / power.sum())

    assert share(render_event("thunder", 2, RATE).samples, 0, 200) > 0.8
    assert share(render_event("keyboard_typing", 2, RATE).samples, 1500, 12000) > 0.8
