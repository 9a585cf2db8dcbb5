"""The validated queries of a suite file, kept for the next load of the same unchanged files.

A run checks its whole plan before the first call (``runner.plan_check``), then plans its
units: both validate every query of the suite, and for a large suite that is most of the
planning (a model validation, a path resolution and an audio header probe per query). The
second load reuses the first one's result when the suite file and every recording it names
are unchanged (same path, modification time and size); a changed recording is validated
again, as is everything in a new process. Callers get their own copies (a pickle round
trip), so editing a returned query cannot alter the next load's.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable
from pathlib import Path

from voxeval.benchmarks.spoken_query import SpokenQuery

FileStamp = tuple[int, int]  # (st_mtime_ns, st_size)

_MAX_SUITES = 4  # recent suites kept (a process rarely plans more than one at a time)
_lock = threading.Lock()
_kept: dict[tuple[str, FileStamp], tuple[bytes, tuple[tuple[str, FileStamp], ...]]] = {}


def _stamp(path: str | Path) -> FileStamp | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def validated_queries(path: Path, validate: Callable[[], list[SpokenQuery]]) -> list[SpokenQuery]:
    """``validate()``'s queries for the suite file ``path``, or a copy of an earlier result
    for the same unchanged suite file and recordings."""
    suite_stamp = _stamp(path)
    if suite_stamp is None:
        return validate()
    key = (str(path.resolve()), suite_stamp)
    with _lock:
        kept = _kept.get(key)
    if kept is not None:
        pickled, recordings = kept
        if all(_stamp(audio) == stamp for audio, stamp in recordings):
            queries: list[SpokenQuery] = pickle.loads(pickled)
            return queries
    queries = validate()
    stamps = [(q.audio, _stamp(q.audio)) for q in queries if q.audio is not None]
    if any(stamp is None for _, stamp in stamps):
        return queries  # a recording vanished meanwhile: nothing worth keeping
    recordings = tuple((audio, stamp) for audio, stamp in stamps if stamp is not None)
    with _lock:
        if len(_kept) >= _MAX_SUITES and key not in _kept:
            _kept.pop(next(iter(_kept)))
        _kept[key] = (pickle.dumps(queries, protocol=pickle.HIGHEST_PROTOCOL), recordings)
    return queries
