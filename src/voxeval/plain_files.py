"""Whole-file reads and writes in as few system calls as the operating system allows.

``open()`` makes seven system calls to write a small file (open, fstat, a terminal check,
lseek, write, close) and ``Path.read_bytes`` as many to read one; these helpers make three
and four. A run writes and reads a handful of small files per unit from several threads, and
every system call lets go of the GIL: when another thread wants it, getting it back is a
hand-over between threads, which on a virtual machine costs more than the call itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_WRITE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def read_file_bytes(path: str | Path, *, check_size: Callable[[int], None] | None = None) -> bytes:
    """The bytes of the file at ``path`` (open, fstat, read, close). ``check_size(size)`` runs
    after the file is opened and before anything is read: it may raise to refuse the file.
    Raises what ``open()`` would (FileNotFoundError, IsADirectoryError, ...)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if check_size is not None:
            check_size(info.st_size)
        want = info.st_size + 1
        data = os.read(fd, want)
        if len(data) == info.st_size and stat.S_ISREG(info.st_mode):
            return data  # the whole file, as fstat sized it
        chunks = [data]
        # grew or shrank since fstat, a short read, or a pipe or a /proc file (size 0)
        while data:
            data = os.read(fd, 1 << 20)
            chunks.append(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file_bytes(path: str | Path, data: bytes, *, fsync: bool = False) -> None:
    """Create or truncate the file at ``path`` and write ``data`` (open, write, close; plus
    fsync when asked). Not atomic: see ``atomic_files.write_bytes_atomic``."""
    fd = os.open(path, _WRITE_FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
