"""G.711 mu-law bytes, as telephone networks and their media-stream websockets carry them.

``voxeval.audio.telephony.mulaw_encode`` models the channel with the continuous companding law;
a phone-line stream needs the exact byte format instead: 8 segments of 16 steps over 14-bit
linear samples, bias 0x84, bits inverted (ITU-T G.711; silence is 0xFF). Pure numpy, so it
works on every Python version (``audioop`` is gone from 3.13).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from voxeval.audio.value import Audio

RATE = 8000
SILENCE = 0xFF  # the code of a zero sample
_BIAS = 0x84
_CLIP14 = 8159  # 14-bit clip level


def _segment(shifted: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Segment number 0-7 of ``(biased magnitude) >> 7`` (1..255): floor(log2)."""
    return np.floor(np.log2(np.maximum(shifted, 1))).astype(np.int32)


def encode_mulaw(pcm: npt.ArrayLike) -> bytes:
    """16-bit linear samples (int16 values) to mu-law bytes."""
    # 14-bit magnitude as the reference coder takes it: a floor shift, so a negative sample
    # rounds away from zero
    x = np.asarray(pcm, dtype=np.int32) >> 2
    sign = np.where(x < 0, 0x80, 0)
    magnitude = (np.minimum(np.abs(x), _CLIP14) << 2) + _BIAS
    exponent = _segment(magnitude >> 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    top = exponent > 7  # the clip level lands one past the last segment: its top step
    exponent, mantissa = np.where(top, 7, exponent), np.where(top, 0x0F, mantissa)
    codes = ~(sign | (exponent << 4) | mantissa) & 0xFF
    return codes.astype(np.uint8).tobytes()


def _decode_table() -> npt.NDArray[np.int16]:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    exponent = (u >> 4) & 0x07
    magnitude = (((u & 0x0F) << 3) + _BIAS) << exponent
    linear = magnitude - _BIAS
    return np.where(u & 0x80, -linear, linear).astype(np.int16)


_DECODE = _decode_table()


def decode_mulaw(data: bytes) -> npt.NDArray[np.int16]:
    """Mu-law bytes to 16-bit linear samples."""
    return _DECODE[np.frombuffer(data, dtype=np.uint8)]


def float_to_mulaw(samples: npt.ArrayLike) -> bytes:
    """Samples in [-1, 1] to mu-law bytes (clipped, rounded to 16 bits first)."""
    x = np.clip(np.asarray(samples, dtype=np.float64), -1.0, 1.0)
    return encode_mulaw(np.round(x * 32767.0).astype(np.int32))


def mulaw_to_audio(data: bytes, source: str = "<mu-law>") -> Audio:
    """Mu-law bytes as 8 kHz audio in [-1, 1]."""
    return Audio((decode_mulaw(data).astype(np.float32) / 32768.0), RATE, source)
