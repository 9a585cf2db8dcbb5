"""16-bit PCM WAV in numpy: the common case of uploads, replies and run artifacts.

libsndfile (through soundfile) costs about 0.3 ms of CPU per call in object set-up and
virtual I/O, which at hundreds of requests a second is a large share of the event loop. This
module writes exactly the bytes soundfile writes for mono float audio as ``PCM_16`` (a
44-byte header; samples clipped to [-1, 1], rounded to 32 bits and cut to their top 16:
compared sample for sample with libsndfile) and reads plain PCM WAV as soundfile does
(int16 / 32768). Anything else (other encodings, extensible headers with a sub-format other
than PCM, truncated files) is left to soundfile: ``decode_pcm16_wav`` returns None for it.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt

_HEADER = struct.Struct("<4sI4s4sIHHIIHH4sI")
_PCM, _EXTENSIBLE = 1, 0xFFFE
_PCM_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


def encode_pcm16_wav(samples: npt.NDArray[np.float32], rate: int) -> bytes:
    """Mono ``samples`` (float) at ``rate`` Hz as the bytes of a 16-bit PCM WAV file."""
    # libsndfile's own route: to 32-bit integers (round half to even, clipped), then the top
    # 16 bits (an arithmetic shift, i.e. floor division by 65536). Scaling by 2**31 is exact.
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0).astype(np.float64)
    wide = np.clip(np.rint(clipped * 2.0**31), -(2.0**31), 2.0**31 - 1).astype(np.int64)
    pcm = (wide >> 16).astype("<i2").tobytes()
    return _mono_header(rate, len(pcm)) + pcm


def _mono_header(rate: int, pcm_bytes: int) -> bytes:
    return _HEADER.pack(
        b"RIFF", 36 + pcm_bytes, b"WAVE", b"fmt ", 16, _PCM, 1, rate, rate * 2, 2, 16,
        b"data", pcm_bytes,
    )  # fmt: skip


def is_encoded_as_we_would(data: bytes, rate: int) -> bool:
    """True when ``data`` is exactly what ``encode_pcm16_wav`` writes for its own decoded
    samples: mono 16-bit PCM at ``rate`` behind the plain 44-byte header and nothing after.
    Decoding (int16 / 32768) and encoding back are then lossless, so such bytes can be
    reused as the encoding of the audio read from them."""
    return len(data) >= _HEADER.size and data[: _HEADER.size] == _mono_header(
        rate, len(data) - _HEADER.size
    )


def decode_pcm16_wav(data: bytes) -> tuple[npt.NDArray[np.float32], int, int] | None:
    """(samples, rate, channels) of a 16-bit PCM WAV file, samples interleaved as float32 in
    [-1, 1); None when ``data`` is anything else (soundfile then decodes it)."""
    layout = _pcm16_layout(data, len(data))
    if layout is None:
        return None
    rate, channels, start, size = layout
    body = data[start : start + size]
    samples = np.frombuffer(body, dtype="<i2").astype(np.float32) / np.float32(32768.0)
    return samples, rate, channels


def pcm16_wav_header(head: bytes, file_size: int) -> tuple[int, int, int] | None:
    """(frames, rate, channels) of a 16-bit PCM WAV file of ``file_size`` bytes from its
    first bytes ``head``, as ``decode_pcm16_wav`` would decode it; None when the header is
    anything else or its data chunk does not start within ``head`` (soundfile decides)."""
    layout = _pcm16_layout(head, file_size)
    if layout is None:
        return None
    rate, channels, _, size = layout
    return size // (2 * channels), rate, channels


def _pcm16_layout(data: bytes, total: int) -> tuple[int, int, int, int] | None:
    """(rate, channels, offset, size) of the samples of a 16-bit PCM WAV file of ``total``
    bytes that begins with ``data``; None for anything else."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    at, fmt, body = 12, None, None
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "little")
        start = at + 8
        if chunk == b"fmt " and size >= 16:
            if start + size > len(data):
                return None
            fmt = data[start : start + size]
        elif chunk == b"data":
            if start + size > total or fmt is None:
                return None  # truncated, or data before its format: soundfile decides
            body = (start, size)
            break
        at = start + size + (size & 1)  # chunks are padded to an even length
    if fmt is None or body is None:
        return None
    tag, channels, rate = struct.unpack_from("<HHI", fmt)
    bits = struct.unpack_from("<H", fmt, 14)[0]
    if tag == _EXTENSIBLE and len(fmt) >= 40 and fmt[26:40] == _PCM_GUID_TAIL:
        tag = struct.unpack_from("<H", fmt, 24)[0]
    if tag != _PCM or bits != 16 or channels < 1 or rate < 1 or body[1] % (2 * channels):
        return None
    return rate, channels, body[0], body[1]
