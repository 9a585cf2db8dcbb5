"""A released MTalk-Bench layout, whichever it is: the model-outputs file (``sample.json``) or
the dataset (a folder or file of rows). See ``mtalk_outputs`` and ``mtalk_dataset``.

The dataset may be supplemented with model-outputs files (``add_outputs``), as the reference
scripts do: the dataset gives the dialogues and their rubrics, the files add models' replies.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    audio_root: str | Path | None = None,
    outputs: Sequence[str | Path] = (),
) -> MTalkImport:
    """Read either layout; ``audio_dir`` receives the dataset's embedded recordings and
    ``audio_root`` is what a model-outputs file's paths are relative to (default: its
    folder). ``outputs``: model-outputs files whose replies supplement a dataset."""
    source = Path(path)
    if detect_layout(source) == "model-outputs":
        if outputs:
            raise ConfigError(f"{source}: extra outputs files supplement a dataset, not {source}")
        return import_model_outputs(source, progress, audio_root)
    result = import_mtalk_dataset(source, audio_dir, progress)
    for extra in outputs:
        if detect_layout(Path(extra)) != "model-outputs":
            raise ConfigError(f"{extra}: not a model-outputs file (sample.json layout)")
        add_outputs(result, import_model_outputs(extra, None, audio_root))
    return result
