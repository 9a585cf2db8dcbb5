"""The append-only render log a suite build keeps in its output folder (``manifest.jsonl``):
each rendered item is logged as soon as its audio is written, so an interrupted build resumes
where it stopped, and an item whose parameters and files are unchanged is reused. The query
build (WildSpeech) and the dialogue build (MTalk) share it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject

Item = TypeVar("Item")
Entry = TypeVar("Entry", bound=Mapping[str, Any])  # one logged line (JSON object)


def read_render_log(path: Path, key: str) -> dict[str, JSONObject]:
    """The last logged entry per ``entry[key]``; a line cut short at the very end (a build
    interrupted while writing) is skipped, a bad line elsewhere is an error naming it."""
    entries: dict[str, JSONObject] = {}
    if not path.exists():
        return entries
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue
            raise ConfigError(f"{path}: line {number}: invalid JSON") from None
        entries[entry[key]] = entry
    return entries


def build_progress(console: Console | None) -> Progress:
    return Progress(
        TextColumn("[bold]building[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
    )


@dataclass
class RenderedEntries(Generic[Entry]):
    entries: list[Entry] = field(default_factory=list)  # one per item, in item order
    rendered: int = 0
    cached: int = 0


@dataclass(frozen=True)
class RenderSteps(Generic[Item, Entry]):
    """How one build names, fingerprints, checks and renders its items."""

    key: Callable[[Item], str]  # the item's key in the log
    params_hash: Callable[[Item], str]  # everything that changes the item's audio
    files_present: Callable[[Entry], bool]  # a logged entry's audio still on disk
    render: Callable[[Item, Path, str], Entry]  # (item, folder, hash) -> its log entry


def render_each(
    items: Sequence[Item],
    steps: RenderSteps[Item, Entry],
    log_path: Path,
    existing: Mapping[str, Entry],
    *,
    label: str,
    progress: bool,
    console: Console | None,
) -> RenderedEntries[Entry]:
    """Reuse each item's logged entry when its hash matches and its files are there, else
    render it and append the entry to the log at once (flushed)."""
    done: RenderedEntries[Entry] = RenderedEntries()
    out = log_path.parent
    bar = build_progress(console) if progress else None
    with log_path.open("a", encoding="utf-8") as log:
        if bar is not None:
            bar.start()
        task = bar.add_task(label, total=len(items)) if bar is not None else None
        try:
            for item in items:
                digest = steps.params_hash(item)
                old = existing.get(steps.key(item))
                if (
                    old is not None
                    and old.get("params_hash") == digest
                    and steps.files_present(old)
                ):
                    done.entries.append(old)
                    done.cached += 1
                else:
                    entry = steps.render(item, out, digest)
                    log.write(json.dumps(entry, sort_keys=True) + "\n")
                    log.flush()
                    done.entries.append(entry)
                    done.rendered += 1
                if bar is not None and task is not None:
                    bar.advance(task)
        finally:
            if bar is not None:
                bar.stop()
    return done
