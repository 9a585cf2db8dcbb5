"""PCM16 framing shared by the websocket systems (Realtime client, websocket bridge)."""

from __future__ import annotations

import base64

from voxeval.audio import Audio
from voxeval.audio.pcm16 import audio_to_pcm16, pcm16_to_audio

# The codec lives in voxeval.audio (providers decode PCM16 too); re-exported for the systems.
__all__ = ["audio_to_pcm16", "pcm16_frames", "pcm16_to_audio"]


def pcm16_frames(audio: Audio, rate: int, frame_ms: float = 20.0) -> list[str]:
    """Base64 frames of ``frame_ms`` of 16-bit little-endian mono PCM at ``rate``."""
    raw = audio_to_pcm16(audio, rate)
    step = max(2, int(rate * frame_ms / 1000) * 2)
    return [base64.b64encode(raw[i : i + step]).decode("ascii") for i in range(0, len(raw), step)]
