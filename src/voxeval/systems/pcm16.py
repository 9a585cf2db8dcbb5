"""PCM16 framing shared by the websocket systems (Realtime client, websocket bridge)."""

from __future__ import annotations

import base64

import numpy as np

from voxeval.audio import Audio
from voxeval.audio.resample import resample


def audio_to_pcm16(audio: Audio, rate: int) -> bytes:
    samples = resample(audio, rate).samples
    return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()


def pcm16_to_audio(data: bytes, rate: int, source: str = "<pcm16>") -> Audio:
    samples = np.frombuffer(data[: len(data) - len(data) % 2], dtype="<i2").astype(np.float32)
    return Audio(samples / 32768.0, rate, source)


def pcm16_frames(audio: Audio, rate: int, frame_ms: float = 20.0) -> list[str]:
    """Base64 frames of ``frame_ms`` of 16-bit little-endian mono PCM at ``rate``."""
    raw = audio_to_pcm16(audio, rate)
    step = max(2, int(rate * frame_ms / 1000) * 2)
    return [base64.b64encode(raw[i : i + step]).decode("ascii") for i in range(0, len(raw), step)]
