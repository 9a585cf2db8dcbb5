"""A released MTalk-Bench layout, whichever it is: the model-outputs file (``sample.json``) or
the dataset (a folder or file of rows). See ``mtalk_outputs`` and ``mtalk_dataset``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from voxeval.benchmarks.mtalk_dataset import import_mtalk_dataset
from voxeval.benchmarks.mtalk_import import MTalkImport, Progress
from voxeval.benchmarks.mtalk_outputs import import_model_outputs, is_model_outputs_file
from voxeval.errors import ConfigError

Layout = Literal["model-outputs", "dataset"]


def detect_layout(path: Path) -> Layout:
    """A JSON file keyed by the three dimension names is a model-outputs file; any other
    file or folder is read as the dataset layout."""
    if not path.exists():
        raise ConfigError(f"{path}: MTalk-Bench release not found")
    return "model-outputs" if is_model_outputs_file(path) else "dataset"


def import_mtalk_release(
    path: str | Path,
    audio_dir: str | Path | None = None,
    progress: Progress | None = None,
    audio_root: str | Path | None = None,
) -> MTalkImport:
    """Read either layout; ``audio_dir`` receives the dataset's embedded recordings and
    ``audio_root`` is what a model-outputs file's paths are relative to (default: its
    folder)."""
    source = Path(path)
    if detect_layout(source) == "model-outputs":
        return import_model_outputs(source, progress, audio_root)
    if audio_root is not None:
        raise ConfigError(f"{source}: --audio-root applies to a model-outputs file only")
    return import_mtalk_dataset(source, audio_dir, progress)
