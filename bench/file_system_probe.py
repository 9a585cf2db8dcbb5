"""How fast the file system under a bench's runs creates folders and small files, and how many
of each a run made per unit.

A unit of a single-turn run creates eight entries (three folders, four new files and a link
to its query recording), so the speed of creating them is part of what a unit costs. That
speed is a property of the disk and its recent history, not of voxeval: on this VM's ext4 a
new folder or file takes ~30 us when the disk is quiet, and 100-800 us for minutes after many
files were deleted on it. Printed next to a timing, the probe tells which of the two the
timing met.

The probe's entries are left in place: deleting them right away would slow what follows.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PAYLOAD = b"x" * 300  # about a unit's reply.json


@dataclass(frozen=True)
class CreateSpeed:
    """Microseconds of wall time per new folder and per new small file (create, write, close)."""

    folder_us: float
    file_us: float

    def describe(self) -> str:
        return f"{self.folder_us:.0f} us per new folder, {self.file_us:.0f} us per new small file"


def create_speed(parent: Path, count: int = 200) -> CreateSpeed:
    """Time ``count`` new folders, then one small file in each, in a new folder in ``parent``."""
    root = Path(tempfile.mkdtemp(prefix="fs-probe-", dir=parent))
    folders = [root / f"d{i}" for i in range(count)]
    start = time.perf_counter()
    for folder in folders:
        os.mkdir(folder)
    folder_s = time.perf_counter() - start
    start = time.perf_counter()
    for folder in folders:
        fd = os.open(folder / "f.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, PAYLOAD)
        finally:
            os.close(fd)
    file_s = time.perf_counter() - start
    return CreateSpeed(folder_s * 1e6 / count, file_s * 1e6 / count)


def entries_per_unit(items: Path, units: int) -> tuple[float, float]:
    """(folders, files) under a run's ``items`` folder per unit. Hard links to one query
    recording count once per unit that holds one, as each is a new directory entry."""
    folders = files = 0
    for _, dirnames, filenames in os.walk(items):
        folders += len(dirnames)
        files += len(filenames)
    return folders / units, files / units
