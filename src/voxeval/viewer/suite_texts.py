"""What a unit page shows from the suite a run played: a single-turn query's text and its
checklist (what the judge grades against), and the recording of each user turn of a dialogue
(``dialogue.json`` names it; the run folder keeps only the replies)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import yaml

from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite
from voxeval.errors import VoxevalError
from voxeval.json_types import JSONReadValue
from voxeval.store import layout
from voxeval.viewer.run_files import SERVED_SUFFIXES

AUDIO_SUFFIXES = {s for s, kind in SERVED_SUFFIXES.items() if kind.startswith("audio/")}


@dataclass(frozen=True)
class QueryText:
    query_id: str
    text: str
    checklist: tuple[str, ...]


def _suite_ref(run_dir: Path) -> str | None:
    try:
        doc = yaml.safe_load((run_dir / layout.RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    config = doc.get("config") if isinstance(doc, dict) else None
    ref = config.get("suite") if isinstance(config, dict) else None
    return ref if isinstance(ref, str) else None


class SuiteTexts:
    """Query texts per run, read once per suite file version (a suite can hold thousands)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, float], dict[str, QueryText]] = {}

    def query(self, run_dir: Path, query_id: str) -> tuple[QueryText | None, str | None]:
        """The query and None, or None and why it cannot be shown."""
        ref = _suite_ref(run_dir)
        if ref is None:
            return None, f"{run_dir / layout.RUN_FILE}: config.suite: missing"
        try:
            path = resolve_suite(ref, run_dir=run_dir).path
            key = (str(path.resolve()), path.stat().st_mtime)
            with self._lock:
                texts = self._cache.get(key)
                if texts is None:
                    texts = {
                        q.id: QueryText(q.id, q.text, tuple(q.checklist))
                        for q in load_query_suite(path)
                    }
                    if len(self._cache) >= 4:  # a few runs' suites at a time
                        self._cache.clear()
                    self._cache[key] = texts
        except (OSError, VoxevalError) as exc:
            return None, f"the suite {ref!r} cannot be read ({str(exc).splitlines()[0]})"
        found = texts.get(query_id)
        if found is None:
            return None, f"query {query_id!r} is not in the suite {ref!r}"
        return found, None


def user_turn_audio(dialogue: JSONReadValue, index: int) -> Path | None:
    """The recording of user turn ``index`` that ``dialogue.json`` names, when it is still
    there and is audio (the path comes from the run's record, never from the request)."""
    if not isinstance(dialogue, dict):
        return None
    turns = dialogue.get("turns")
    for turn in turns if isinstance(turns, list) else []:
        if isinstance(turn, dict) and turn.get("index") == index:
            raw = turn.get("user_audio")
            if not isinstance(raw, str) or not raw:
                return None
            path = Path(raw)
            if path.suffix.lower() not in AUDIO_SUFFIXES or not path.is_file():
                return None
            return path
    return None
