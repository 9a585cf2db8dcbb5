"""The file-system probe of the benches: it times real creations and counts a run's entries."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import file_system_probe  # noqa: E402  (bench/ is not a package)


def test_create_speed_times_new_folders_and_files_and_leaves_them(tmp_path: Path) -> None:
    speed = file_system_probe.create_speed(tmp_path, count=20)
    assert speed.folder_us > 0 and speed.file_us > 0
    (probe,) = tmp_path.iterdir()
    made = sorted(probe.iterdir())
    assert len(made) == 20
    assert all((folder / "f.json").read_bytes() == file_system_probe.PAYLOAD for folder in made)
    assert "us per new folder" in speed.describe()


def test_entries_per_unit_counts_folders_and_files_under_items(tmp_path: Path) -> None:
    items = tmp_path / "items"
    for item in ("q1", "q2"):
        unit = items / item / "sys" / "0"
        unit.mkdir(parents=True)
        for name in ("reply.json", "scores.json", "assistant.wav"):
            (unit / name).write_bytes(b"{}")
    # two units: 3 folders and 3 files each
    assert file_system_probe.entries_per_unit(items, 2) == (3.0, 3.0)
