"""Seeded DSP building blocks for synthetic background sounds: filters, noises, envelopes.

Both named sets of synthetic noise (``sound_textures`` for suite building and
``noise_environments`` for the live-call noise perturbation) are made from these pieces, so a
fix or a change of filter design lands in one place.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import signal

Array = npt.NDArray[np.float64]


def lowpass(x: Array, cutoff_hz: float, rate: int, order: int = 4) -> Array:
    """Butterworth low-pass of ``order`` (second-order sections, causal)."""
    sos = signal.butter(order, cutoff_hz, btype="lowpass", fs=rate, output="sos")
    return np.asarray(signal.sosfilt(sos, x))


def bandpass(x: Array, low_hz: float, high_hz: float, rate: int, order: int = 4) -> Array:
    """Butterworth band-pass; the upper edge is held below Nyquist so low rates still work."""
    high_hz = min(high_hz, rate / 2 * 0.95)
    sos = signal.butter(order, [low_hz, high_hz], btype="bandpass", fs=rate, output="sos")
    return np.asarray(signal.sosfilt(sos, x))


def brown_walk(rng: np.random.Generator, n: int) -> Array:
    """A random walk with its slow drift removed: brown-ish noise in the time domain."""
    x = np.cumsum(rng.standard_normal(n))
    x -= np.convolve(x, np.ones(512) / 512, mode="same")
    return x


def coloured_noise(rng: np.random.Generator, n: int, exponent: float) -> Array:
    """Noise with power spectrum ~ 1/f**exponent (0 white, 1 pink, 2 brown), unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    f[0] = f[1] if n > 1 else 1.0
    out = np.fft.irfft(spectrum / f ** (exponent / 2), n)
    return out / (np.sqrt(np.mean(out**2)) + 1e-12)


def slow_envelope(rng: np.random.Generator, n: int, rate: int, hz: float) -> Array:
    """A smooth random envelope in [0, 1] varying at about ``hz``."""
    points = max(4, int(n / rate * hz) + 2)
    knots = rng.uniform(0.0, 1.0, points)
    return np.interp(np.linspace(0, points - 1, n), np.arange(points), knots)


def event_bumps(
    rng: np.random.Generator, n: int, rate: int, per_s: float, length_s: float
) -> Array:
    """Envelope of randomly placed smooth (Hann) bumps, about ``per_s`` a second, at least one."""
    env = np.zeros(n)
    width = max(2, int(length_s * rate))
    window = np.hanning(width)
    for start in rng.integers(0, max(1, n - width), size=rng.poisson(per_s * n / rate) + 1):
        seg = env[start : start + width]
        seg += window[: seg.size]
    return env


def decaying_bursts(
    rng: np.random.Generator, n: int, rate: int, per_s: float, tau_s: float
) -> Array:
    """Impulse train of exponentially decaying bursts (hammer blows, clinks, crackle)."""
    env = np.zeros(n)
    decay = np.exp(-np.arange(int(tau_s * rate * 5)) / (tau_s * rate))
    for start in rng.integers(0, max(1, n), size=rng.poisson(per_s * n / rate)):
        seg = env[start : start + decay.size]
        seg += decay[: seg.size]
    return env
