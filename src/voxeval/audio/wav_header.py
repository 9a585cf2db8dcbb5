"""Sanity of a WAV file's header against the file itself, before any sample is decoded.

libsndfile reads a WAV whose data chunk is cut short without complaint (it returns the frames
that are there), so a file truncated in a copy becomes a 0.06 s query without a word. A
header that declares zero channels, a rate of 0 Hz or a data chunk of 4 GB (the placeholder a
recorder writes before it knows the length, never patched) describes no audio either. Each is
reported here with what the header says and what the file holds."""

from __future__ import annotations

import struct

# A data chunk size of 0xFFFFFFFF (or 0 in some streaming writers) is the "length unknown"
# placeholder; no real file of that size passes the size limits anyway.
_PLACEHOLDER_SIZES = (0xFFFFFFFF, 0xFFFFFFFE)
_GB = 1024**3


def wav_header_problem(head: bytes, file_size: int) -> str | None:
    """What is wrong with the header of a RIFF/WAVE file of ``file_size`` bytes beginning
    with ``head`` (its first bytes, enough to reach the data chunk), or None when it is sound
    or not a RIFF/WAVE file at all (other readers decide then)."""
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    at = 12
    fmt: bytes | None = None
    while at + 8 <= len(head):
        chunk = head[at : at + 4]
        size = int.from_bytes(head[at + 4 : at + 8], "little")
        start = at + 8
        if chunk == b"fmt ":
            if start + min(size, 16) > file_size:
                return _cut_before_data(file_size)
            if start + min(size, 16) > len(head):
                return None  # not read far enough to tell
            fmt = head[start : start + min(size, 16)]
            problem = _format_problem(fmt)
            if problem:
                return problem
        elif chunk == b"data":
            if fmt is None:
                return "the WAV header has no format (fmt) chunk before its data chunk"
            return _data_problem(size, file_size - start)
        at = start + size + (size & 1)
    return _cut_before_data(file_size) if at + 8 > file_size else None


def _cut_before_data(file_size: int) -> str:
    return f"the WAV file ends before its audio data (the file was cut short at {file_size} bytes)"


def _format_problem(fmt: bytes) -> str | None:
    if len(fmt) < 16:
        return "the WAV header's format (fmt) chunk is shorter than 16 bytes"
    channels, rate = struct.unpack_from("<HI", fmt, 2)
    if channels == 0:
        return "the WAV header declares 0 channels"
    if rate == 0:
        return "the WAV header declares a sample rate of 0 Hz"
    return None


def _data_problem(declared: int, available: int) -> str | None:
    if declared <= available:
        return None
    if declared in _PLACEHOLDER_SIZES or declared >= _GB:
        return (
            f"the WAV header declares a data chunk of {declared / _GB:.1f} GB ({declared} "
            f"bytes) but the file holds {max(available, 0)} bytes of audio: the header's "
            "length field is wrong (a placeholder a recorder never filled in?); rewrite the "
            "file with its real length"
        )
    return (
        f"truncated WAV: the header declares {declared} bytes of audio data but only "
        f"{max(available, 0)} follow (the file was cut short)"
    )
