"""Where things live inside a run folder, and how files are written so a crash never leaves
a half-written artifact behind.

```
runs/<run-id>/
  run.yaml        resolved config + provenance
  index.sqlite    items, units, scores, usage, comparisons (the queryable truth)
  items/<item>[@<condition>]/<system>/<trial>/   artifacts of one work unit
  comparisons/<step>/<key>.json   one result of a comparison step across systems
  report/         summary.json, summary.md, scores.csv
```
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

RUN_FILE = "run.yaml"
INDEX_FILE = "index.sqlite"
ITEMS_DIR = "items"
COMPARISONS_DIR = "comparisons"
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
