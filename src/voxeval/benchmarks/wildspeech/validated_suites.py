"""The validated queries of a suite file, kept for the next load of the same unchanged files.

A run checks its whole plan before the first call (``runner.plan_check``), then plans its
units: both validate every query of the suite, and for a large suite that is most of the
planning (a model validation, a path resolution and an audio header probe per query). The
second load reuses the first one's result when the suite file and every recording it names
are unchanged (same path, modification time and size); a changed recording is validated
again, as is everything in a new process. Callers get their own copies, so editing a
returned query cannot alter the next load's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.pickled_memo import PickledMemo

FileStamp = tuple[int, int]  # (st_mtime_ns, st_size)

# (suite file, its stamp) -> (queries, the stamp of each recording they name); a process
# rarely plans more than one suite at a time
_validated = PickledMemo(max_entries=4)


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
    try:
        queries, recordings = _validated.get(key)
    except KeyError:
        pass
    else:
        if all(_stamp(audio) == stamp for audio, stamp in recordings):
            kept: list[SpokenQuery] = queries
            return kept
    queries = validate()
    stamps = [(q.audio, _stamp(q.audio)) for q in queries if q.audio is not None]
    if all(stamp is not None for _, stamp in stamps):  # else a recording vanished meanwhile
        _validated.put(key, (queries, stamps))
    return queries
