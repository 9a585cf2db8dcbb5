"""Writes a finished call into its unit folder (every file atomically):

``user.wav``, ``assistant.wav``, ``mixed.wav`` (16-bit PCM, 16 kHz; audio mode only),
``events.jsonl`` (the timeline), ``initial_db.json``, ``final_db.json``, ``db_diff.json``
(structured diff of the final against the expected database) and ``call.json`` (how the call
ended, durations, the parties and the condition, and under ``latency`` whether the agent's
latencies were measured or modelled, with the share rendered by voxeval per reply).

Every track and the timeline's speech end at the call's end (``voxeval.simulation.call_end``):
speech the other party was still producing after a hang-up is not part of the recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from voxeval.atomic_files import read_json, write_json_atomic
from voxeval.audio import write_audio
from voxeval.benchmarks.tools.db_compare import (
    REFERENCE_SETTINGS,
    TaskCompletionSettings,
    diff_databases,
)
from voxeval.json_types import JSONObject, JSONReadObject
from voxeval.runformat import CallFile, parse_artifact, record_data
from voxeval.simulation.call_end import timeline_until_end, track_until
from voxeval.simulation.engine import CallResult
from voxeval.simulation.timeline import Timeline

EVENTS_FILE = "events.jsonl"
CALL_FILE = "call.json"
INITIAL_DB_FILE = "initial_db.json"
FINAL_DB_FILE = "final_db.json"
DIFF_FILE = "db_diff.json"
TRACK_FILES = {"user": "user.wav", "assistant": "assistant.wav", "mixed": "mixed.wav"}


def record_call(
    result: CallResult,
    unit_dir: Path,
    *,
    expected_db: JSONObject | None = None,
    meta: JSONReadObject | None = None,
    compare: TaskCompletionSettings = REFERENCE_SETTINGS,
) -> None:
    """``compare``: the suite's rules for the ``db_diff.json`` diff (as task completion)."""
    unit_dir.mkdir(parents=True, exist_ok=True)
    timeline = timeline_until_end(result.timeline)
    t_end = timeline.end.t if timeline.end is not None else result.duration_s
    tracks = {"user": result.user_track, "assistant": result.assistant_track, "mixed": result.mixed}
    for name, audio in tracks.items():
        if audio is not None:
            write_audio(track_until(audio, t_end), unit_dir / TRACK_FILES[name])
    timeline.write_jsonl(unit_dir / EVENTS_FILE)
    write_json_atomic(unit_dir / INITIAL_DB_FILE, result.initial_db)
    write_json_atomic(unit_dir / FINAL_DB_FILE, result.final_db)
    if expected_db is not None:
        diff = diff_databases(expected_db, result.final_db, compare)
        # a TypedDict of JSON fields; mypy does not see a TypedDict as a JSON mapping
        write_json_atomic(unit_dir / DIFF_FILE, cast(JSONReadObject, diff))
    # call.json last: its presence marks a complete recording
    call = {
        "end_reason": result.end_reason,
        "error": result.error,
        "duration_s": round(result.duration_s, 4),
        "wall_s": round(result.wall_s, 4),
        "audio": result.mixed is not None,
        **result.details,
        **(meta or {}),
    }
    write_json_atomic(unit_dir / CALL_FILE, record_data(CallFile, call, unit_dir / CALL_FILE))


def load_call(unit_dir: Path) -> tuple[dict[str, Any], Timeline, dict[str, Any] | None]:
    """(call.json, timeline, final database) of a recorded call; raises FileNotFoundError
    naming the missing file."""
    call = read_json(unit_dir / CALL_FILE)
    if call is None:
        raise FileNotFoundError(f"{unit_dir / CALL_FILE}: the call was not recorded")
    parse_artifact(CallFile, call, unit_dir / CALL_FILE)  # a malformed file: file and field
    timeline = Timeline.read_jsonl(unit_dir / EVENTS_FILE)
    return call, timeline, read_json(unit_dir / FINAL_DB_FILE)
