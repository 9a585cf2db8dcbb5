"""Small deterministic signals for the audio tests."""

from __future__ import annotations

import numpy as np

from voxeval.audio import Audio


def sine(freq: float = 440.0, seconds: float = 1.0, rate: int = 16000, amp: float = 0.5) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((amp * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate, source="sine")


def white_noise(seconds: float = 1.0, rate: int = 16000, amp: float = 0.1, seed: int = 0) -> Audio:
    rng = np.random.default_rng(seed)
    data = (amp * rng.standard_normal(round(seconds * rate))).astype(np.float32)
    return Audio(data, rate, source="noise")


def snr_db(clean: Audio, mixed: Audio) -> float:
    """Whole-signal SNR of ``mixed`` against the clean part it contains."""
    residual = mixed.samples.astype(np.float64) - clean.samples.astype(np.float64)
    signal_power = np.mean(np.square(clean.samples.astype(np.float64)))
    return float(10 * np.log10(signal_power / np.mean(np.square(residual))))
