"""Tiny audio fixtures for system tests."""

from __future__ import annotations

import base64

import numpy as np

from voxeval.audio import Audio, audio_to_wav_bytes


def chirp(seconds: float = 0.5, rate: int = 16000) -> Audio:
    t = np.arange(int(seconds * rate)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * (300 + 400 * t) * t)).astype(np.float32), rate)


def wav_b64(audio: Audio) -> str:
    return base64.b64encode(audio_to_wav_bytes(audio)).decode("ascii")
