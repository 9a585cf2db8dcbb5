"""What an import of a released MTalk-Bench layout yields, and how it is written out.

Both loaders (``mtalk_outputs`` for the model-outputs ``sample.json`` layout, ``mtalk_dataset``
for the one-row-per-turn dataset) give an ``MTalkImport``: the dialogues, the released replies
of every model (one per user turn, looked up by ``turn_item_id``) and every problem found,
each naming the file, where in it, and the field.

``write_mtalk_suite`` turns an import into a suite folder::

    DIR/suite.yaml, DIR/dialogues.jsonl     the dialogue suite (protocol: multi_turn)
    DIR/replies/<model>.jsonl               a replay manifest per model
    DIR/systems.yaml                        ``systems:`` with one ``replay`` system per model
    DIR/import.json                         counts and problems of the import

A turn or reply whose recording is absent loads transcript-only: the suite's turn has no
``audio`` and the manifest row ``"audio": null, "transcript_only": true`` (a replay then
answers with the released text alone). The import counts them (``audio`` in the counts,
``absent_audio`` lists each one) and the suite's metadata carries the same counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from voxeval import atomic_files
from voxeval.benchmarks.mtalk.dialogue import Dialogue
from voxeval.benchmarks.mtalk.dialogue_suite import relative_path, write_dialogue_suite
from voxeval.benchmarks.mtalk.transcript_cues import cue_warnings

# Called as progress(done, total) while rows or dialogues are read.
Progress = Callable[[int, int], None]
REPLIES_DIR = "replies"
SYSTEMS_FILE = "systems.yaml"
IMPORT_REPORT = "import.json"
_UNSAFE = re.compile(r"[^a-z0-9_.\-]+")


@dataclass(frozen=True)
class ImportProblem:
    """A part of the release that could not be read: ``where`` is the dialogue/turn (or row)
    and ``field`` the key at fault."""

    file: str
    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.field}: {self.message}"


@dataclass(frozen=True)
class ReleasedReply:
    """One model's released reply to one user turn."""

    item_id: str
    audio: str | None  # absolute path; None: the recording is absent (transcript-only)
    text: str | None = None


@dataclass
class MTalkImport:
    source: str
    layout: str  # "model-outputs" or "dataset"
    dialogues: list[Dialogue] = field(default_factory=list)
    replies: dict[str, list[ReleasedReply]] = field(default_factory=dict)
    problems: list[ImportProblem] = field(default_factory=list)
    # Audio files the import created (embedded recordings), removed by ``discard_written``.
    written: list[str] = field(default_factory=list)
    # "<dialogue> <part>: <path>" of every recording found nowhere (loaded transcript-only)
    absent_audio: list[str] = field(default_factory=list)

    def discard_written(self) -> None:
        """Remove the recordings the import wrote (and their folder, once empty)."""
        folders = {Path(name).parent for name in self.written}
        for name in self.written:
            Path(name).unlink(missing_ok=True)
        for folder in folders:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        self.written = []

    def problem(self, file: Path | str, where: str, field_name: str, message: str) -> None:
        self.problems.append(ImportProblem(str(file), where, field_name, message))

    def unanswered(self) -> dict[str, list[str]]:
        """``{model: dialogue ids}`` of the dialogues with a user turn the model's released
        replies do not cover (a replay of that model fails those units, cause ``input``)."""
        out = {}
        for model, rows in sorted(self.replies.items()):
            answered = {r.item_id for r in rows}
            missing = [d.id for d in self.dialogues if any(i not in answered for i in d.item_ids())]
            if missing:
                out[model] = missing
        return out

    def audio_counts(self) -> dict[str, dict[str, int]]:
        """Recordings found of the user turns (``questions``) and of the replies, and how
        many of each load transcript-only."""
        turns = [t for d in self.dialogues for t in d.turns]
        replies = [r for rows in self.replies.values() for r in rows]
        found_q = sum(t.audio is not None for t in turns)
        found_r = sum(r.audio is not None for r in replies)
        return {
            "questions": {
                "total": len(turns),
                "with_audio": found_q,
                "transcript_only": len(turns) - found_q,
            },
            "replies": {
                "total": len(replies),
                "with_audio": found_r,
                "transcript_only": len(replies) - found_r,
            },
        }

    def warnings(self) -> list[str]:
        """Dimensions whose cue is only in the audio, for dialogues whose transcripts do not
        annotate it (a transcript judge cannot perceive it)."""
        return cue_warnings(self.dialogues)

    def counts(self) -> dict[str, Any]:
        return {
            "dialogues": len(self.dialogues),
            "turns": sum(len(d.turns) for d in self.dialogues),
            "models": {name: len(rows) for name, rows in sorted(self.replies.items())},
            "unanswered": self.unanswered(),
            "problems": len(self.problems),
            "audio": self.audio_counts(),
            "absent_audio": list(self.absent_audio),
            "warnings": self.warnings(),
        }

    def summary(self) -> str:
        """One line of counts, one of recordings, then one line per problem and warning."""
        counts = self.counts()
        head = (
            f"{self.layout} {self.source}: {counts['dialogues']} dialogues, "
            f"{counts['turns']} user turns, {len(self.replies)} models, "
            f"{counts['problems']} problems"
        )
        q, r = counts["audio"]["questions"], counts["audio"]["replies"]
        audio = (
            f"  recordings found: {q['with_audio']} of {q['total']} user turns, "
            f"{r['with_audio']} of {r['total']} replies"
        )
        if q["transcript_only"] or r["transcript_only"]:
            audio += (
                f"; transcript-only: {q['transcript_only']} user turns, "
                f"{r['transcript_only']} replies (their audio is absent: judges read the "
                "transcription)"
            )
        gaps = [
            f"  {model}: no released reply to every turn of {len(ids)} dialogue(s) "
            f"({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}); a replay run fails them"
            for model, ids in counts["unanswered"].items()
        ]
        warnings = [f"  warning: {w}" for w in counts["warnings"]]
        return "\n".join([head, audio, *(f"  {p}" for p in self.problems), *gaps, *warnings])


def model_file_name(model: str, taken: set[str]) -> str:
    """A file stem for a model name, unique among ``taken``."""
    base = _UNSAFE.sub("-", model.lower()).strip("-.") or "model"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def write_mtalk_suite(
    imported: MTalkImport, out_dir: str | Path, name: str, description: str = ""
) -> dict[str, Any]:
    """Write the suite folder (see the module doc); returns what was written."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    suite_file = write_dialogue_suite(
        imported.dialogues,
        folder,
        name,
        description or f"MTalk-Bench {imported.layout} release read from {imported.source}",
        metadata={
            "imported_from": imported.source,
            "layout": imported.layout,
            "audio": imported.audio_counts(),
        },
    )
    systems: list[dict[str, Any]] = []
    manifests: dict[str, str] = {}
    taken: set[str] = set()
    for model in sorted(imported.replies):
        stem = model_file_name(model, taken)
        manifest = folder / REPLIES_DIR / f"{stem}.jsonl"
        rows = []
        for reply in imported.replies[model]:
            row: dict[str, Any] = {
                "item_id": reply.item_id,
                "audio": None
                if reply.audio is None
                else relative_path(reply.audio, manifest.parent),
            }
            if reply.audio is None:
                row["transcript_only"] = True
            if reply.text is not None:
                row["text"] = reply.text
            rows.append(row)
        manifest.parent.mkdir(parents=True, exist_ok=True)
        atomic_files.write_text_atomic(
            manifest, "".join(_json_line(r) for r in rows) if rows else ""
        )
        manifests[model] = str(manifest)
        systems.append(
            {"name": model, "type": "replay", "manifest": f"{REPLIES_DIR}/{manifest.name}"}
        )
    systems_file = folder / SYSTEMS_FILE
    note = (
        "# Released replies as replay systems; manifest paths are relative to this folder\n"
        "# (copy these entries into a run config placed here, or adjust the paths).\n"
    )
    atomic_files.write_text_atomic(
        systems_file, note + yaml.safe_dump({"systems": systems}, sort_keys=False)
    )
    written = {
        "suite": str(suite_file),
        "systems": str(systems_file),
        "manifests": manifests,
        **imported.counts(),
        "problem_list": [asdict(p) for p in imported.problems],
    }
    atomic_files.write_json_atomic(folder / IMPORT_REPORT, written)
    return written


def _json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"
