"""Whole-file reads and writes with few system calls: the same bytes as Python's own file
objects, for regular files, pipes and /proc files; a size check before anything is read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.plain_files import read_file_bytes, write_file_bytes


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=70_000))
def test_what_is_written_reads_back(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("plain") / "f.bin"
    write_file_bytes(path, data)
    assert path.read_bytes() == data
    assert read_file_bytes(path) == data


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 20) + 3, (3 << 20) + 1])
def test_reads_files_of_any_size_whole(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert read_file_bytes(path) == data


def test_a_write_replaces_a_longer_file_and_can_fsync(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"a much longer earlier content")
    write_file_bytes(path, b"short", fsync=True)
    assert path.read_bytes() == b"short"


def test_the_size_check_sees_the_size_first_and_may_refuse(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 1234)
    seen: list[int] = []
    assert read_file_bytes(path, check_size=seen.append) == b"x" * 1234
    assert seen == [1234]

    def refuse(size: int) -> None:
        raise ValueError(f"too big: {size}")

    before = _open_fds()
    with pytest.raises(ValueError, match="too big: 1234"):
        read_file_bytes(path, check_size=refuse)
    assert _open_fds() == before  # the file was closed


def test_errors_are_those_of_open(tmp_path: Path) -> None:
    before = _open_fds()
    with pytest.raises(FileNotFoundError):
        read_file_bytes(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        read_file_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        write_file_bytes(tmp_path / "no-such-folder" / "f.json", b"{}")
    assert _open_fds() == before


def test_a_proc_file_of_size_zero_is_read_whole() -> None:
    path = Path("/proc/self/cmdline")
    if not path.exists():
        pytest.skip("no /proc here")
    assert os.stat(path).st_size == 0
    data = read_file_bytes(path)
    assert data and data == path.read_bytes()


def test_a_pipe_is_read_to_its_end(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    chunks = [os.urandom(5000) for _ in range(30)]  # more than one pipe buffer

    def feed() -> None:
        # buffered: its write() sends every byte even when a system call is cut short by a
        # signal (an unbuffered write returns the partial count, seen under a profiler)
        with open(fifo, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        assert read_file_bytes(fifo) == b"".join(chunks)
    finally:
        writer.join(timeout=10)
