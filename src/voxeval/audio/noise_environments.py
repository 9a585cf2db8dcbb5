"""Background-noise environments for the noise perturbation, synthesised with DSP.

Each environment is a seeded signal that captures the acoustic character of the place — its
spectral tilt and its typical events — rather than a recording: street and road (low rumble
plus passing vehicles), coffee shop (murmur plus cup clinks), airport gate (hall hum plus
announcement chimes), construction (hammering plus a drill), a crying baby, background music,
and bad-connection static (hiss plus crackle)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import signal

from voxeval.audio.synthetic_noise import (
    Array,
    bandpass,
    coloured_noise,
    decaying_bursts,
    event_bumps,
    lowpass,
)
from voxeval.audio.value import Audio
from voxeval.errors import ConfigError


def _street(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    cars = event_bumps(rng, n, rate, 0.25, 3.0)
    horn = event_bumps(rng, n, rate, 0.05, 0.4) * np.sign(np.sin(2 * np.pi * 420 * t)) * 0.3
    return lowpass(coloured_noise(rng, n, 2.0), 800, rate) * (0.4 + cars) + horn


def _road(rng: np.random.Generator, n: int, rate: int) -> Array:
    engine = np.sin(2 * np.pi * 55 * np.arange(n) / rate) * 0.3
    return lowpass(coloured_noise(rng, n, 1.5), 500, rate) + engine


def _coffee_shop(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    murmur = bandpass(coloured_noise(rng, n, 1), 200, 2500, rate, order=2)
    murmur = murmur * (0.6 + 0.4 * np.abs(np.sin(2 * np.pi * 1.7 * t + rng.uniform(0, 6))))
    clinks = decaying_bursts(rng, n, rate, 0.6, 0.03) * np.sin(2 * np.pi * 3100 * t)
    return murmur * 3 + clinks


def _airport(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    hum = lowpass(coloured_noise(rng, n, 1.0), 1500, rate)
    chime = event_bumps(rng, n, rate, 0.08, 1.2) * (
        np.sin(2 * np.pi * 660 * t) + np.sin(2 * np.pi * 880 * t)
    )
    return hum + chime


def _construction(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    hammer = decaying_bursts(rng, n, rate, 2.0, 0.05) * coloured_noise(rng, n, 0.5)
    drill = event_bumps(rng, n, rate, 0.15, 2.0) * signal.sawtooth(2 * np.pi * 140 * t) * 0.5
    return hammer * 2 + drill + 0.2 * coloured_noise(rng, n, 1.0)


def _baby(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    f0 = 450 + 60 * np.sin(2 * np.pi * 5 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voice = sum(np.sin(k * phase) / k for k in range(1, 6))
    cries = (np.sin(2 * np.pi * 0.6 * t + rng.uniform(0, 6)) > -0.2).astype(float)
    return lowpass(np.asarray(voice) * cries, 4000, rate)


def _music(rng: np.random.Generator, n: int, rate: int) -> Array:
    t = np.arange(n) / rate
    roots = 220 * 2 ** (rng.choice([0, 3, 5, 7, 10], size=int(t[-1] / 2) + 2) / 12)
    root = roots[(t // 2).astype(int)]
    chord = sum(np.sin(2 * np.pi * root * r * t) for r in (1.0, 1.26, 1.5))
    beat = 0.5 + 0.5 * (np.sin(2 * np.pi * 2 * t) > 0)
    return np.asarray(chord) * beat


def _static(rng: np.random.Generator, n: int, rate: int) -> Array:
    crackle = decaying_bursts(rng, n, rate, 8.0, 0.004) * rng.standard_normal(n) * 4
    dropouts = event_bumps(rng, n, rate, 0.3, 0.3)
    return coloured_noise(rng, n, 0.0) * (0.5 + dropouts) + crackle


ENVIRONMENTS: dict[str, Callable[[np.random.Generator, int, int], Array]] = {
    "airport_gate": _airport,
    "baby_crying": _baby,
    "background_music": _music,
    "bad_connection_static": _static,
    "coffee_shop": _coffee_shop,
    "construction": _construction,
    "street": _street,
    "road": _road,
}


def environment_noise(name: str, seconds: float, *, rate: int = 16000, seed: int = 0) -> Audio:
    """``seconds`` of the named environment at unit RMS level (scaled later to an SNR)."""
    if name not in ENVIRONMENTS:
        raise ConfigError(f"unknown noise environment {name!r}; known: {', '.join(ENVIRONMENTS)}")
    n = max(rate // 10, round(seconds * rate))
    data = ENVIRONMENTS[name](np.random.default_rng(seed), n, rate)
    data = data / (np.sqrt(np.mean(data**2)) + 1e-12) * 0.1
    return Audio(data.astype(np.float32), rate, f"<noise:{name}>")
