"""``voxeval import mtalk``: a released MTalk-Bench layout as a dialogue suite plus one
``replay`` system per model (see docs/multi-turn.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from voxeval.benchmarks.mtalk.mtalk_import import write_mtalk_suite
from voxeval.benchmarks.mtalk.mtalk_release import detect_layout, import_mtalk_release
from voxeval.cli.common import console, friendly_errors, print_json
from voxeval.cli.progress import counting_progress
from voxeval.errors import ConfigError

AUDIO_DIR = "audio"


@friendly_errors
def mtalk_suite(  # `voxeval import mtalk` (commands_import)
    path: Path = typer.Argument(
        ...,
        help="model-outputs file (sample.json layout) or the folder holding it, or a dataset "
        "folder/file",
    ),
    out: Path = typer.Option(..., "-o", "--out", help="suite folder to write"),
    name: str | None = typer.Option(None, help="suite name (default: the folder's name)"),
    audio_root: list[Path] = typer.Option(
        [],
        "--audio-root",
        help="folder where a model-outputs file's recordings are searched first (repeatable; "
        "then its folder and the one above, also by file name under static/audio/); "
        "recordings found nowhere load transcript-only",
    ),
    outputs: list[Path] = typer.Option(
        [],
        "--outputs",
        help="model-outputs file whose replies supplement a dataset PATH (repeatable)",
    ),
    skip_unreadable: bool = typer.Option(
        False,
        "--skip-unreadable",
        help="write the readable part when some turns cannot be read (they are listed)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print what was written as JSON"),
) -> None:
    """Wrap a released MTalk-Bench layout as a dialogue suite and its replay systems."""
    layout = detect_layout(path)
    with counting_progress(disable=as_json) as progress:
        unit = "dialogues" if layout == "model-outputs" else "rows"
        task = progress.add_task(f"reading {layout} {unit}", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        imported = import_mtalk_release(path, out / AUDIO_DIR, advance, audio_root, outputs)
    if imported.problems and not skip_unreadable:
        imported.discard_written()
        raise ConfigError(
            f"{imported.summary()}\n{len(imported.problems)} unreadable part(s): fix them, or "
            "pass --skip-unreadable to write the readable dialogues"
        )
    written: dict[str, Any] = write_mtalk_suite(imported, out, name or out.resolve().name)
    if as_json:
        print_json(written)
        return
    console.print(imported.summary(), highlight=False)
    console.print(
        f"wrote {written['suite']} ({written['dialogues']} dialogues) and "
        f"{written['systems']} ({len(written['manifests'])} replay systems)",
        highlight=False,
    )
