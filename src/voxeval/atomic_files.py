"""Crash-safe file writes: write to a temporary file in the same folder, then rename it into
place, so a kill never leaves a half-written artifact; text is redacted on the way out."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.plain_files import read_file_bytes, write_file_bytes
from voxeval.redaction import REDACTED, redact_text

# Temporary names of voxeval's writers inside a run folder; the pid lets a later process tell
# the leftovers of a dead writer (killed between writing and renaming) from work in progress:
#   .<name>.<pid>.<thread>.tmp    write_bytes_atomic
#   .<name>.<pid>.<thread>.link   the unit's user.wav link (runner.single_turn)
#   .suite.<pid>.tmp/             the staging folder of the suite copy, at the top only
#                                 (benchmarks.suite_info.save_suite_copy)
_TEMP_FILE = re.compile(r"^\..+\.(?P<pid>[0-9]{1,10})\.[0-9]{1,20}\.(?:tmp|link)$")
_TEMP_DIR = re.compile(r"^\.suite\.(?P<pid>[0-9]{1,10})\.tmp$")


def temp_path(path: Path) -> Path:
    """The temporary file ``write_bytes_atomic`` fills before renaming it to ``path``."""
    # pid + thread id make the name unique without tempfile's random-name retries
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def write_bytes_atomic(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Write to a temporary file in the same folder, then rename it over ``path``: readers
    (and a resumed run) see either the old file or the complete new one, even after
    ``kill -9``. ``fsync`` also survives an OS crash, at a few ms per file. A temporary file
    a killed process left behind is removed by ``remove_stale_temp_files``."""
    tmp = temp_path(path)
    try:
        write_file_bytes(tmp, data, fsync=fsync)
        os.replace(tmp, path)
    except FileNotFoundError:
        if path.parent.exists():
            raise
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data, fsync=fsync)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _process_alive(pid: int) -> bool:
    """False only when no process ``pid`` exists on this machine. A name whose number cannot
    be a pid was not written by voxeval: it counts as alive, so it is left alone."""
    if pid <= 0 or os.name != "posix":
        return True  # (on Windows, os.kill(pid, 0) would send Ctrl-C, not test existence)
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid
    return True


def stale_temp_paths(run_dir: Path) -> list[Path]:
    """Temporary files (and suite staging folders) in ``run_dir`` whose writer process is
    gone: left by ``kill -9`` between writing and renaming. Only voxeval's own temporary
    names count; the files of a live writer (a run still going) are never listed."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(run_dir):
        here = Path(folder)
        if here == run_dir:
            for name in dirs:
                match = _TEMP_DIR.match(name)
                if match and not _process_alive(int(match["pid"])):
                    found.append(here / name)
            dirs[:] = [d for d in dirs if not _TEMP_DIR.match(d)]
        for name in files:
            match = _TEMP_FILE.match(name)
            if match and not _process_alive(int(match["pid"])):
                found.append(here / name)
    return sorted(found)


def remove_stale_temp_files(run_dir: Path) -> list[Path]:
    """Delete what ``stale_temp_paths`` lists; returns the paths removed."""
    removed = []
    for path in stale_temp_paths(run_dir):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:
            continue  # another resuming process removed it first
        removed.append(path)
    return removed


_HTML_SUFFIXES = (".html", ".htm")
_HTML_REDACTED = REDACTED.replace("<", "&lt;").replace(">", "&gt;")


def write_text_atomic(path: Path, text: str) -> str:
    """Write ``text`` atomically with every known secret redacted (see ``voxeval.redaction``):
    this is the boundary every text artifact of a run passes through. Returns what was
    written."""
    clean = redact_text(text)
    if path.suffix.lower() in _HTML_SUFFIXES and clean != text:
        clean = clean.replace(REDACTED, _HTML_REDACTED)  # visible in a browser, not a tag
    write_bytes_atomic(path, clean.encode("utf-8"))
    return clean


def write_json_atomic(path: Path, data: JSONReadValue) -> None:
    """JSON (sorted keys, indented) through ``write_text_atomic``: secrets are redacted."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def record_json(data: JSONReadObject) -> str:
    """A JSON object written one field per line, keys sorted, each value on its line:
    ``{"wer": {"value": 0.1, ...}}`` shows as ``"wer": {"value": 0.1, ...}``. For records of
    a few fields (a unit's scores, reply, transcripts) that reads as well as indentation,
    and every value goes through the C encoder, where ``indent`` makes Python encode the
    whole object itself, four times slower (once per unit, per file)."""
    if not data:
        return "{}\n"
    fields = [
        f"  {json.dumps(str(key))}: {json.dumps(value, sort_keys=True, default=str)}"
        for key, value in sorted(data.items(), key=lambda item: str(item[0]))
    ]
    return "{\n" + ",\n".join(fields) + "\n}\n"


def write_record_json_atomic(path: Path, data: JSONReadObject) -> str:
    """``record_json`` through ``write_text_atomic``: secrets are redacted. Returns what was
    written."""
    return write_text_atomic(path, record_json(data))


def read_json(path: Path) -> Any:
    """The parsed file, or None when it does not exist."""
    try:
        data = read_file_bytes(path)
    except FileNotFoundError:
        return None
    return json.loads(data.decode("utf-8"))
