"""Short generated sound events (seeded DSP): a phone ringing, alarm beeps, keyboard clicks,
a door knock, thunder, and two non-verbal vocal sounds (a sigh, a cough).

Each maker takes a random generator and a sample rate and returns float samples peaking at
0.9. They are synthetic stand-ins, built so that each has a measurable signature: the ring's
two tones (400 and 450 Hz), the alarm's 3 kHz beeps, the clicks' broadband transients, the
thunder's low rumble. The sigh and the cough are shaped noise: recognisable, not recordings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from voxeval.audio.synthetic_noise import Array, bandpass, brown_walk, lowpass
from voxeval.audio.value import Audio

# Telephone ring: two tones, ring-ring cadence (on, short off, on, long off), twice.
RING_TONES_HZ = (400.0, 450.0)
RING_CADENCE_S = ((0.4, 0.2), (0.4, 0.6), (0.4, 0.2), (0.4, 0.0))
ALARM_TONE_HZ = 3000.0
ALARM_BEEPS = 6
ALARM_ON_S, ALARM_OFF_S = 0.22, 0.16
KEYBOARD_S = 3.0
THUNDER_S = 3.0

EventMaker = Callable[[np.random.Generator, int], Array]


def _ramp(x: Array, rate: int, fade_s: float = 0.005) -> Array:
    n = min(x.size // 2, round(fade_s * rate))
    if n:
        ramp = np.linspace(0.0, 1.0, n)
        x[:n] *= ramp
        x[-n:] *= ramp[::-1]
    return x


def phone_ring(rng: np.random.Generator, rate: int) -> Array:
    pieces = []
    for on_s, off_s in RING_CADENCE_S:
        t = np.arange(round(on_s * rate)) / rate
        tone = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) for f in RING_TONES_HZ)
        # a bell-like flutter at 20 Hz, as electromechanical ringers have
        tone = tone * (0.75 + 0.25 * np.sin(2 * np.pi * 20.0 * t))
        pieces += [_ramp(np.asarray(tone, dtype=np.float64), rate), np.zeros(round(off_s * rate))]
    return np.concatenate(pieces)


def alarm_beeps(rng: np.random.Generator, rate: int) -> Array:
    t = np.arange(round(ALARM_ON_S * rate)) / rate
    pieces = []
    for _ in range(ALARM_BEEPS):
        beep = np.sin(2 * np.pi * ALARM_TONE_HZ * t + rng.uniform(0, 2 * np.pi))
        pieces += [_ramp(beep, rate), np.zeros(round(ALARM_OFF_S * rate))]
    return np.concatenate(pieces[:-1])


def keyboard_typing(rng: np.random.Generator, rate: int) -> Array:
    n = round(KEYBOARD_S * rate)
    out = np.zeros(n)
    click_len = round(0.012 * rate)
    decay = np.exp(-np.arange(click_len) / (0.0015 * rate))
    pos = round(rng.uniform(0.0, 0.05) * rate)
    while pos + click_len < n:
        click = rng.standard_normal(click_len) * decay * rng.uniform(0.5, 1.0)
        out[pos : pos + click_len] += click
        # typing rhythm: mostly quick strokes, now and then a short hesitation
        gap = rng.uniform(0.07, 0.18) if rng.random() > 0.1 else rng.uniform(0.3, 0.5)
        pos += round(gap * rate)
    return bandpass(out, 1500, min(9000, rate / 2 - 500), rate, order=2)


def door_knock(rng: np.random.Generator, rate: int) -> Array:
    knock_len = round(0.09 * rate)
    t = np.arange(knock_len) / rate
    pieces = []
    for _ in range(3):
        body = np.sin(2 * np.pi * rng.uniform(140, 180) * t) + 0.5 * rng.standard_normal(knock_len)
        knock = lowpass(body * np.exp(-t * 60), 1800, rate, order=2)
        pieces += [knock, np.zeros(round(rng.uniform(0.16, 0.22) * rate))]
    return np.concatenate(pieces[:-1])


def thunder(rng: np.random.Generator, rate: int) -> Array:
    n = round(THUNDER_S * rate)
    t = np.arange(n) / rate
    rumble = lowpass(brown_walk(rng, n), 150, rate)
    rumble /= np.max(np.abs(rumble)) or 1.0
    crack = bandpass(rng.standard_normal(n), 200, 2500, rate) * np.exp(-t * 12)
    envelope = (1 - np.exp(-t * 20)) * np.exp(-t * 0.9)
    return (rumble + 0.3 * crack / (np.max(np.abs(crack)) or 1.0)) * envelope


def sigh(rng: np.random.Generator, rate: int) -> Array:
    n = round(0.9 * rate)
    t = np.arange(n) / rate
    breath = bandpass(rng.standard_normal(n), 350, 2600, rate)
    # a quick in-breath swell, then a long falling out-breath
    envelope = np.minimum(t / 0.15, 1.0) * np.exp(-np.maximum(t - 0.15, 0.0) * 3.5)
    return breath * envelope


def cough(rng: np.random.Generator, rate: int) -> Array:
    burst_len = round(0.22 * rate)
    t = np.arange(burst_len) / rate
    pieces = []
    for _ in range(2):
        noise = bandpass(rng.standard_normal(burst_len), 250, 3500, rate)
        voiced = 0.4 * np.sin(2 * np.pi * rng.uniform(180, 260) * t)
        pieces += [(noise + voiced) * np.exp(-t * 18), np.zeros(round(0.12 * rate))]
    return np.concatenate(pieces[:-1])


EVENT_SOUNDS: dict[str, EventMaker] = {
    "phone_ring": phone_ring,
    "alarm_beeps": alarm_beeps,
    "keyboard_typing": keyboard_typing,
    "door_knock": door_knock,
    "thunder": thunder,
    "sigh": sigh,
    "cough": cough,
}


def render_event(name: str, seed: int, rate: int = 24000) -> Audio:
    """Event ``name`` rendered deterministically from ``seed`` (peak 0.9)."""
    data = EVENT_SOUNDS[name](np.random.default_rng(seed), rate)
    top = float(np.max(np.abs(data))) or 1.0
    return Audio((0.9 * data / top).astype(np.float32), rate, source=f"generated:{name}")
