"""Freed heap pages go back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes
import sys

import pytest

from voxeval.providers.runtime.freed_memory import release_freed_memory

BLOCK = 64 * 1024  # below glibc's mmap threshold: served from the heap
BLOCKS = 4_000


def resident_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_freed_holes_in_the_heap_are_returned() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    for block in blocks:
        ctypes.memset(block, 1, BLOCK)  # resident
    # every other block freed: 128 MB of holes between live blocks, which free() keeps
    for block in blocks[::2]:
        libc.free(block)
    holes = resident_mb()
    try:
        assert release_freed_memory() is True
        assert holes - resident_mb() > 64
        assert all(ctypes.string_at(b, 4) == b"\x01" * 4 for b in blocks[1::2])  # kept intact
    finally:
        for block in blocks[1::2]:
            libc.free(block)
