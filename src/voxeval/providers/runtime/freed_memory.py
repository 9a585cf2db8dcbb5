"""Giving freed heap memory back to the operating system.

glibc keeps memory that C and C++ code freed in its arenas (one per thread that allocated)
for later allocations. A run that loads a model, drops it and loads another of a different
size (a fresh Whisper sampler per seeded decode, the TTS engines of a suite build) leaves
those arenas holding hundreds of megabytes that nothing uses, and its resident set only
grows. ``malloc_trim(0)`` returns the free pages of every arena; it changes no value any
computation sees.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Return the heap's free pages to the system; True when it could (glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
