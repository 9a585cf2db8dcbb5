"""What one unit's folder holds, read for its page: the audio tracks, the call's event
timeline, the transcripts next to the intended text, tool calls, the database diff, the
stored reply or dialogue and the error of a failed unit. Only this unit's files are read."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import soundfile as sf

from voxeval.json_types import JSONObject, JSONReadValue, JSONValue
from voxeval.runformat import (
    CALL_FILE,
    DIALOGUE_FAULT_FILE,
    DIALOGUE_FILE,
    REPLY_FILE,
    ArtifactFormatError,
    ArtifactModel,
    CallFile,
    DialogueFaultFile,
    DialogueFile,
    ReplyFile,
    read_json_artifact,
)
from voxeval.simulation.timeline import SpeakerSegment, Timeline, ToolEvent
from voxeval.store import layout

# Names the protocols give their recordings (store/layout, simulation/recorder,
# protocols/single_turn and multi_turn), with what a listener hears in each.
TRACK_LABELS = {
    "mixed.wav": "mixed (the line as recorded)",
    "user.wav": "caller / user",
    "assistant.wav": "agent / system reply",
}
_REPLY_WAV = re.compile(r"^reply_(\d+)\.wav$")
TEXT_LIMIT = 200_000  # characters of a text artifact shown inline (error.txt, JSON)


@dataclass(frozen=True)
class Track:
    name: str
    label: str
    duration_s: float | None
    sample_rate: int | None


@dataclass(frozen=True)
class Overlap:
    start: float
    end: float


@dataclass
class UnitArtifacts:
    folder: Path
    relative: str  # the unit folder relative to the run, for file URLs
    exists: bool
    tracks: list[Track] = field(default_factory=list)
    timeline: Timeline | None = None
    timeline_error: str | None = None
    overlaps: list[Overlap] = field(default_factory=list)
    call: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    transcripts: JSONValue = None  # as the files hold them (None when absent or unreadable)
    dialogue: dict[str, Any] | None = None
    db_diff: JSONValue = None
    initial_db: JSONValue = None
    final_db: JSONValue = None
    system_fault: dict[str, Any] | None = None
    validation: JSONValue = None
    error_text: str | None = None
    other_files: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def segments(self) -> list[SpeakerSegment]:
        if self.timeline is None:
            return []
        return sorted(self.timeline.segments, key=lambda s: s.start)

    @property
    def tools(self) -> list[ToolEvent]:
        return [] if self.timeline is None else sorted(self.timeline.tools, key=lambda t: t.t)

    @property
    def db_changes(self) -> bool:
        return bool(self.db_diff) and diff_has_changes(self.db_diff or {})


def track_order(name: str) -> tuple[int, int, str]:
    fixed = list(TRACK_LABELS)
    if name in fixed:
        return (0, fixed.index(name), name)
    match = _REPLY_WAV.match(name)
    if match:
        return (1, int(match.group(1)), name)
    return (2, 0, name)


def track_label(name: str) -> str:
    match = _REPLY_WAV.match(name)
    if match:
        return f"reply to user turn {match.group(1)}"
    return TRACK_LABELS.get(name, name)


def texts_differ(heard: JSONReadValue, meant: JSONReadValue) -> bool:
    """Whether a transcript says something else than the text it is shown against: case and
    spacing do not count (recognisers capitalise and space as they like)."""
    if not isinstance(heard, str) or not isinstance(meant, str):
        return heard != meant
    return " ".join(heard.split()).casefold() != " ".join(meant.split()).casefold()


def diff_has_changes(diff: JSONReadValue) -> bool:
    """True when a ``db_diff.json`` records any difference between expected and final."""

    def nonempty(value: JSONReadValue) -> bool:
        if isinstance(value, dict):
            return any(nonempty(v) for v in value.values())
        if isinstance(value, list):
            return bool(value)
        return value is not None

    return nonempty(diff)


def speech_overlaps(segments: list[SpeakerSegment]) -> list[Overlap]:
    """Stretches where the caller and the agent spoke at once (talk-over and barge-ins)."""
    users = [s for s in segments if s.speaker == "user"]
    agents = [s for s in segments if s.speaker == "assistant"]
    out: list[Overlap] = []
    for a in users:
        for b in agents:
            start, end = max(a.start, b.start), min(a.end, b.end)
            if end > start:
                out.append(Overlap(round(start, 3), round(end, 3)))
    return sorted(out, key=lambda o: o.start)


def _read_json(path: Path, unreadable: dict[str, str]) -> JSONValue:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        unreadable[path.name] = f"{type(exc).__name__}: {exc}"
        return None


def _read_artifact(
    path: Path, model: type[ArtifactModel], unreadable: dict[str, str]
) -> JSONObject | None:
    """A unit record read through its run-format model (``reply.json``, ``call.json``,
    ``dialogue.json``, ``system_fault.json``); one that does not validate is listed as
    unreadable with the field at fault, never shown half-understood."""
    try:
        parsed = read_json_artifact(model, path)
    except ArtifactFormatError as exc:
        unreadable[path.name] = str(exc).replace(f"{path}: ", "")
        return None
    return None if parsed is None else parsed.to_data()


def _track(path: Path) -> Track:
    try:
        info = sf.info(str(path))
        return Track(path.name, track_label(path.name), float(info.duration), int(info.samplerate))
    except (RuntimeError, OSError, sf.LibsndfileError):
        return Track(path.name, track_label(path.name), None, None)


KNOWN_FILES = {
    "call.json",
    "reply.json",
    "transcripts.json",
    "dialogue.json",
    "db_diff.json",
    "initial_db.json",
    "final_db.json",
    "events.jsonl",
    "validation.json",
    "system_fault.json",
    layout.SCORES_FILE,
    layout.ERROR_FILE,
}


def load_unit(run_dir: Path, relative: Path) -> UnitArtifacts:
    folder = run_dir / relative
    found = UnitArtifacts(folder=folder, relative=relative.as_posix(), exists=folder.is_dir())
    if not found.exists:
        return found
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    wavs = sorted((n for n in names if n.lower().endswith(".wav")), key=track_order)
    found.tracks = [_track(folder / n) for n in wavs]
    bad = found.unreadable
    found.call = _read_artifact(folder / CALL_FILE, CallFile, bad)
    found.reply = _read_artifact(folder / REPLY_FILE, ReplyFile, bad)
    found.transcripts = _read_json(folder / "transcripts.json", bad)
    found.dialogue = _read_artifact(folder / DIALOGUE_FILE, DialogueFile, bad)
    found.db_diff = _read_json(folder / "db_diff.json", bad)
    found.initial_db = _read_json(folder / "initial_db.json", bad)
    found.final_db = _read_json(folder / "final_db.json", bad)
    found.system_fault = _read_artifact(folder / DIALOGUE_FAULT_FILE, DialogueFaultFile, bad)
    found.validation = _read_json(folder / "validation.json", bad)
    events = folder / "events.jsonl"
    if events.is_file():
        try:
            found.timeline = Timeline.read_jsonl(events)
            found.overlaps = speech_overlaps(found.segments)
        except (OSError, ValueError, TypeError) as exc:
            found.timeline_error = f"{events.name}: {exc}"
    error = folder / layout.ERROR_FILE
    if error.is_file():
        found.error_text = error.read_text(encoding="utf-8", errors="replace")[:TEXT_LIMIT]
    found.other_files = [n for n in names if n not in KNOWN_FILES and n not in wavs]
    return found
