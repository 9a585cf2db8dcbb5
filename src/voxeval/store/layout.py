"""Where things live inside a run folder, and how files are written so a crash never leaves
a half-written artifact behind.

```
runs/<run-id>/
  run.yaml        resolved config + provenance
  index.sqlite    items, units, scores, usage (the queryable truth)
  items/<item>[@<condition>]/<system>/<trial>/   artifacts of one work unit
  report/         summary.json, summary.md, scores.csv
```
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from voxeval.store.secrets import REDACTED, redact_text

RUN_FILE = "run.yaml"
INDEX_FILE = "index.sqlite"
ITEMS_DIR = "items"
REPORT_DIR = "report"
SCORES_FILE = "scores.json"
ERROR_FILE = "error.txt"

_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]+")
_MAX_NAME = 80


def safe_name(raw: str) -> str:
    """A folder name for an id: unsafe characters become ``_``; when anything had to change,
    a short hash of the original is appended so distinct ids never share a folder."""
    cleaned = _UNSAFE.sub("_", raw).strip("._") or "_"
    if cleaned == raw and len(raw) <= _MAX_NAME:
        return raw
    digest = hashlib.sha1(raw.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[:_MAX_NAME]}-{digest}"


def unit_relpath(item_id: str, system: str, trial: int, condition: str) -> Path:
    """``items/<item>[@<condition>]/<system>/<trial>`` relative to the run folder."""
    item_part = item_id if condition == "clean" else f"{item_id}@{condition}"
    return Path(ITEMS_DIR) / safe_name(item_part) / safe_name(system) / str(int(trial))


def write_bytes_atomic(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Write to a temporary file in the same folder, then rename it over ``path``: readers
    (and a resumed run) see either the old file or the complete new one, even after
    ``kill -9``. ``fsync`` also survives an OS crash, at a few ms per file."""
    # pid + thread id make the temporary name unique without tempfile's random-name retries
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except FileNotFoundError:
        if path.parent.exists():
            raise
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data, fsync=fsync)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_HTML_SUFFIXES = (".html", ".htm")
_HTML_REDACTED = REDACTED.replace("<", "&lt;").replace(">", "&gt;")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` atomically with every known secret redacted (see ``store.secrets``):
    this is the boundary every text artifact of a run passes through."""
    clean = redact_text(text)
    if path.suffix.lower() in _HTML_SUFFIXES and clean != text:
        clean = clean.replace(REDACTED, _HTML_REDACTED)  # visible in a browser, not a tag
    write_bytes_atomic(path, clean.encode("utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    """JSON (sorted keys, indented) through ``write_text_atomic``: secrets are redacted."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def read_json(path: Path) -> Any:
    """The parsed file, or None when it does not exist."""
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))
