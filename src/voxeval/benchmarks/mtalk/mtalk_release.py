"""A released MTalk-Bench layout, whichever it is: the model-outputs file (``sample.json``, or
the folder holding it, such as the public repository's ``data/``) or the dataset (a folder or
file of rows). See ``mtalk_outputs`` and ``mtalk_dataset``.

The dataset may be supplemented with model-outputs files (``add_outputs``), as the reference
scripts do: the dataset gives the dialogues and their rubrics, the files add models' replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from voxeval.benchmarks.dataset_files import data_files
from voxeval.benchmarks.mtalk.mtalk_dataset import import_mtalk_dataset
from voxeval.benchmarks.mtalk.mtalk_import import MTalkImport, Progress
from voxeval.benchmarks.mtalk.mtalk_outputs import import_model_outputs, is_model_outputs_file
from voxeval.errors import ConfigError

Layout = Literal["model-outputs", "dataset"]
AudioRoots = str | Path | Sequence[str | Path] | None


def outputs_file_in(folder: Path) -> Path | None:
    """The model-outputs file a folder holds when all its data files are model-outputs
    files and there is exactly one (the repository's ``data/`` holds ``sample.json``);
    ``ConfigError`` naming them when there are several; None when it holds dataset rows."""
    files = data_files(folder)
    outputs = [f for f in files if is_model_outputs_file(f)]
    if not outputs or len(outputs) < len(files):
        return None
    if len(outputs) > 1:
        names = ", ".join(str(f) for f in outputs)
        raise ConfigError(
            f"{folder}: holds several model-outputs files ({names}); give one as PATH "
            "(and the others with --outputs over a dataset)"
        )
    return outputs[0]


def release_file(path: Path) -> tuple[Layout, Path]:
    """The layout of ``path`` and what to read: a JSON file keyed by the three dimension
    names (or a folder holding only such a file) is a model-outputs file; any other file or
    folder is read as the dataset layout."""
    if not path.exists():
        raise ConfigError(f"{path}: MTalk-Bench release not found")
    if path.is_dir():
        found = outputs_file_in(path)
        return ("model-outputs", found) if found is not None else ("dataset", path)
    return ("model-outputs" if is_model_outputs_file(path) else "dataset"), path


def detect_layout(path: Path) -> Layout:
    """``model-outputs`` or ``dataset`` (see ``release_file``)."""
    return release_file(path)[0]


def add_outputs(base: MTalkImport, extra: MTalkImport) -> None:
    """Add ``extra``'s replies (a model-outputs file) to ``base`` (the dataset), in place.

    Only replies to turns the dataset has are added, and a reply the dataset already holds is
    kept as it is: each skipped reply is a problem naming the outputs file."""
    items = {item for d in base.dialogues for item in d.item_ids()}
    held = {(model, r.item_id) for model, rows in base.replies.items() for r in rows}
    base.problems.extend(extra.problems)
    for model, rows in sorted(extra.replies.items()):
        for reply in rows:
            dialogue, _, turn = reply.item_id.rpartition(".")
            if reply.item_id not in items:
                base.problem(
                    extra.source, f"{dialogue} {turn}", f"dialogue.{model}", "not in the dataset"
                )
            elif (model, reply.item_id) in held:
                base.problem(
                    extra.source,
                    f"{dialogue} {turn}",
                    f"dialogue.{model}",
                    "the dataset already has this reply (kept the dataset's)",
                )
            else:
                base.replies.setdefault(model, []).append(reply)
    base.source = f"{base.source} + {extra.source}"


def import_mtalk_release(
    path: str | Path,
    audio_dir: str | Path | None = None,
    progress: Progress | None = None,
    audio_root: AudioRoots = None,
    outputs: Sequence[str | Path] = (),
) -> MTalkImport:
    """Read either layout; ``audio_dir`` receives the dataset's embedded recordings and
    ``audio_root`` (one folder or several) is where a model-outputs file's recordings are
    searched first (then its folder and the one above; see ``mtalk_audio_search``).
    ``outputs``: model-outputs files whose replies supplement a dataset."""
    layout, source = release_file(Path(path))
    if layout == "model-outputs":
        if outputs:
            raise ConfigError(f"{source}: extra outputs files supplement a dataset, not {source}")
        return import_model_outputs(source, progress, audio_root)
    result = import_mtalk_dataset(source, audio_dir, progress)
    for extra in outputs:
        if detect_layout(Path(extra)) != "model-outputs":
            raise ConfigError(f"{extra}: not a model-outputs file (sample.json layout)")
        add_outputs(result, import_model_outputs(extra, None, audio_root))
    return result
