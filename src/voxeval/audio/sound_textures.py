"""Synthetic environmental sounds (seeded DSP) for suite building, by noise category.

The benchmark's noise library falls back on these when no recording covers a category. Each
texture returns ``duration_s`` seconds at ``rate`` Hz, peak-normalised to 0.9. They
are recognisable textures, not recordings: coloured noise shaped by filters and envelopes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from voxeval.audio.synthetic_noise import (
    Array,
    bandpass,
    brown_walk,
    lowpass,
    slow_envelope,
)
from voxeval.audio.value import Audio

TextureMaker = Callable[[np.random.Generator, float, int], Array]


def rain(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    hiss = bandpass(rng.standard_normal(n), 800, 7000, rate) * 0.4
    drops = np.zeros(n)
    count = int(duration_s * 120)
    for pos in rng.integers(0, n, count):
        length = min(n - pos, int(rate * 0.01))
        t = np.arange(length) / rate
        freq = rng.uniform(2000, 5000)
        drops[pos : pos + length] += (
            rng.uniform(0.2, 1.0) * np.sin(2 * np.pi * freq * t) * np.exp(-t * 600)
        )
    return hiss + drops


def wind(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    base = lowpass(brown_walk(rng, n), 600, rate)
    gusts = 0.3 + 0.7 * slow_envelope(rng, n, rate, 0.6)
    whistle = bandpass(rng.standard_normal(n), 300, 900, rate) * slow_envelope(rng, n, rate, 0.4)
    base /= np.max(np.abs(base)) or 1.0
    return base * gusts + 0.3 * whistle


def stream(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    flow = bandpass(rng.standard_normal(n), 300, 3000, rate)
    bubbles = lowpass(np.abs(rng.standard_normal(n)), 25, rate)  # fast random gurgle
    bubbles /= np.max(bubbles) or 1.0
    return flow * (0.5 + bubbles)


def crickets(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    t = np.arange(n) / rate
    carrier = np.sin(2 * np.pi * rng.uniform(4000, 5000) * t)
    pulses = (np.sin(2 * np.pi * 30 * t) > 0.2).astype(float)  # syllables within a chirp
    chirp_rate = rng.uniform(1.5, 3.0)
    chirps = (np.mod(t * chirp_rate, 1.0) < 0.25).astype(float)
    return lowpass(carrier * pulses * chirps, 7000, rate) + 0.02 * rng.standard_normal(n)


def clapping(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    out = np.zeros(n)
    count = int(duration_s * rng.uniform(25, 45))  # a small audience
    clap_len = int(0.04 * rate)
    env = np.exp(-np.arange(clap_len) / rate * 120)
    for pos in rng.integers(0, max(1, n - clap_len), count):
        burst = bandpass(rng.standard_normal(clap_len), 800, 4000, rate, order=2)
        out[pos : pos + clap_len] += rng.uniform(0.4, 1.0) * burst * env
    return out


def footsteps(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    out = np.zeros(n)
    step_s = rng.uniform(0.45, 0.6)
    step_len = int(0.08 * rate)
    env = np.exp(-np.arange(step_len) / rate * 60)
    pos = int(rng.uniform(0, step_s) * rate)
    while pos + step_len < n:
        thud = (
            lowpass(rng.standard_normal(step_len), 400, rate) * 3
            + bandpass(rng.standard_normal(step_len), 1500, 4000, rate, order=2) * 0.3
        )
        out[pos : pos + step_len] += thud * env
        pos += int((step_s + rng.normal(0, 0.03)) * rate)
    return out


def crowd_murmur(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    """Many unintelligible talkers: speech-band noise with syllable-rate modulation each."""
    n = round(duration_s * rate)
    t = np.arange(n) / rate
    out = np.zeros(n)
    for _ in range(12):
        voice = bandpass(
            rng.standard_normal(n), rng.uniform(200, 400), rng.uniform(2500, 3500), rate
        )
        syllables = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(3, 6) * t + rng.uniform(0, 6.3))
        out += voice * syllables * slow_envelope(rng, n, rate, 0.5)
    return out


def clock_tick(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    out = np.zeros(n)
    tick_len = int(0.005 * rate)
    period = int(rate * 1.0 / rng.choice([1, 2, 4]))
    for k, pos in enumerate(range(int(rng.uniform(0, 0.5) * rate), n - tick_len, period)):
        freq = 3000 if k % 2 == 0 else 2500  # tick / tock
        tt = np.arange(tick_len) / rate
        out[pos : pos + tick_len] += np.sin(2 * np.pi * freq * tt) * np.exp(-tt * 900)
    return out + 0.003 * rng.standard_normal(n)


def vacuum(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    t = np.arange(n) / rate
    motor = rng.uniform(180, 260)
    hum = sum(np.sin(2 * np.pi * motor * k * t) / k for k in range(1, 6))
    air = bandpass(rng.standard_normal(n), 1000, 6000, rate)
    return 0.3 * hum + air * 1.5


def traffic(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    rumble = lowpass(brown_walk(rng, n), 200, rate)
    rumble /= np.max(np.abs(rumble)) or 1.0
    out = 0.5 * rumble
    t = np.arange(n) / rate
    for _ in range(max(1, int(duration_s / 2.5))):
        center = rng.uniform(0, duration_s)
        swell = np.exp(-(((t - center) / rng.uniform(0.6, 1.2)) ** 2))
        out += swell * bandpass(rng.standard_normal(n), 80, 1500, rate)
    return out


def siren(rng: np.random.Generator, duration_s: float, rate: int) -> Array:
    n = round(duration_s * rate)
    t = np.arange(n) / rate
    cycle = rng.uniform(1.5, 3.0)
    freq = 900 + 350 * np.sin(2 * np.pi * t / cycle)  # wail between 550 and 1250 Hz
    phase = 2 * np.pi * np.cumsum(freq) / rate
    tone = np.sin(phase) + 0.4 * np.sin(2 * phase) + 0.2 * np.sin(3 * phase)
    approach = np.linspace(rng.uniform(0.2, 0.5), 1.0, n)
    return tone * approach + 0.05 * lowpass(rng.standard_normal(n), 300, rate)


SOUND_TEXTURES: dict[str, tuple[str, TextureMaker]] = {
    "crickets": ("animals", crickets),
    "rain": ("natural_soundscapes", rain),
    "wind": ("natural_soundscapes", wind),
    "stream": ("natural_soundscapes", stream),
    "clapping": ("human_non_speech", clapping),
    "footsteps": ("human_non_speech", footsteps),
    "crowd_murmur": ("human_non_speech", crowd_murmur),
    "clock_tick": ("interior_domestic", clock_tick),
    "vacuum": ("interior_domestic", vacuum),
    "traffic": ("exterior_urban", traffic),
    "siren": ("exterior_urban", siren),
}


def render_texture(name: str, seed: int, duration_s: float = 6.0, rate: int = 16000) -> Audio:
    """Render texture ``name`` deterministically from ``seed``."""
    _, fn = SOUND_TEXTURES[name]
    rng = np.random.default_rng(seed)
    data = fn(rng, duration_s, rate)
    top = float(np.max(np.abs(data))) or 1.0
    return Audio((0.9 * data / top).astype(np.float32), rate, source=f"generated:{name}")
