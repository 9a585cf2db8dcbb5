"""Raw 16-bit little-endian mono PCM, the headerless audio of Realtime sessions, websocket
bridges and some chat-completion servers."""

from __future__ import annotations

import numpy as np

from voxeval.audio.resample import resample
from voxeval.audio.value import Audio


def audio_to_pcm16(audio: Audio, rate: int) -> bytes:
    samples = resample(audio, rate).samples
    return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()


def pcm16_to_audio(data: bytes, rate: int, source: str = "<pcm16>") -> Audio:
    """Samples of ``data`` at ``rate``; a trailing odd byte (a cut-off stream) is dropped."""
    samples = np.frombuffer(data[: len(data) - len(data) % 2], dtype="<i2").astype(np.float32)
    return Audio(samples / 32768.0, rate, source)
