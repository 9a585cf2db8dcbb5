"""The files of one run folder: where each unit's artifacts live, emptying a unit's folder
for a new attempt, the temporary files of killed writers, and telling a run folder from a
foreign one (``--no-resume`` never wipes the latter)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from voxeval import atomic_files
from voxeval.errors import ConfigError
from voxeval.store import layout
from voxeval.store.records import UnitLike


def is_run_folder(path: Path) -> bool:
    """True when ``path`` holds a voxeval run: a ``run.yaml`` mapping with a ``run_id``."""
    run_file = path / layout.RUN_FILE
    if not run_file.is_file():
        return False
    try:
        data = yaml.safe_load(run_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and bool(data.get("run_id"))


def is_foreign_folder(path: Path) -> bool:
    """An existing, non-empty folder that is not a voxeval run (``--no-resume`` must not
    wipe it)."""
    return path.is_dir() and any(path.iterdir()) and not is_run_folder(path)


def refuse_to_reset_foreign_folder(path: Path) -> None:
    """Raise (deleting nothing) when ``--no-resume`` names a folder that is not empty and is
    not a voxeval run folder."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: exists and is not a folder; choose another --out")
    if is_foreign_folder(path):
        raise foreign_folder_error(path)


def foreign_folder_error(path: Path) -> ConfigError:
    return ConfigError(
        f"{path}: refusing --no-resume: the folder is not empty and is not a voxeval run "
        f"(no {layout.RUN_FILE} with a run_id), so nothing was deleted; use an empty or "
        "new --out folder"
    )


class RunFolder:
    """The folder ``run_dir`` of a run (created with its ``items`` and ``report`` folders)."""

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir).resolve()
        # Decided before anything is created here: a reset never wipes a foreign folder.
        self.foreign = is_foreign_folder(self.run_dir)
        self.items_dir = self.run_dir / layout.ITEMS_DIR
        self.report_dir = self.run_dir / layout.REPORT_DIR
        self.run_file = self.run_dir / layout.RUN_FILE
        for folder in (self.run_dir, self.items_dir, self.report_dir):
            folder.mkdir(parents=True, exist_ok=True)
        # unit folder of (item, system, trial, condition), once made
        self._unit_dirs: dict[tuple[str, str, int, str], Path] = {}
        # their parent folders known to exist (an item's folder holds every system's units)
        self._parent_dirs: set[Path] = set()

    def unit_dir(self, unit: UnitLike) -> Path:
        """``items/<item>[@<condition>]/<system>/<trial>/`` (created)."""
        key = (unit.item_id, unit.system, unit.trial, unit.condition)
        path = self._unit_dirs.get(key)
        if path is None:  # a unit asks for its folder several times: build and make it once
            path = self.run_dir
            # from the top down: one mkdir per missing level (``parents=True`` starts at the
            # leaf and fails once per missing level first)
            *parents, leaf = layout.unit_relpath(*key).parts
            for part in parents:
                path = path / part
                if path not in self._parent_dirs:
                    _make_dir(path)
                    self._parent_dirs.add(path)
            path = path / leaf
            _make_dir(path)
            self._unit_dirs[key] = path
        return path

    def clear_unit_dir(self, unit: UnitLike) -> int:
        """Empty the folder of a unit about to run again (resume): what an earlier attempt
        left (a recording cut short by ``kill -9``, its ``error.txt``, scores never committed)
        must not mix with the new attempt's files. Returns the entries removed."""
        path = self.run_dir / layout.unit_relpath(
            unit.item_id, unit.system, unit.trial, unit.condition
        )
        if not path.is_dir():
            return 0
        removed = 0
        for entry in path.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
            removed += 1
        return removed

    def remove_stale_temp_files(self) -> list[Path]:
        """Delete the temporary files that writers killed mid-write left in the run folder
        (only voxeval's own temporary names, only of processes that no longer exist)."""
        return atomic_files.remove_stale_temp_files(self.run_dir)

    def clear_artifacts(self) -> None:
        """Delete every unit's artifacts and the report (``--no-resume``); refuses, deleting
        nothing, when the folder was not a voxeval run when opened."""
        if self.foreign:
            raise foreign_folder_error(self.run_dir)
        self._unit_dirs.clear()
        self._parent_dirs.clear()
        for folder in (self.items_dir, self.report_dir):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True, exist_ok=True)


def _make_dir(path: Path) -> None:
    """Create the folder ``path`` (its parent exists); an existing folder is fine."""
    try:
        path.mkdir()
    except FileExistsError:
        if not path.is_dir():
            raise
