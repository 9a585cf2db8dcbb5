"""A unit's reply handed from its interaction to its scoring in memory.

Scoring reads a unit's ``reply.json`` and ``assistant.wav``, which the interaction wrote a
moment earlier in the same process (local executor, or a worker process). Reading them back
costs a dozen system calls per unit, each a chance for another thread to take the GIL.
Instead, the interaction keeps the exact text and bytes it wrote; the unit's scoring takes
them once (``take``) and decodes them as a read of the files would. Re-scoring a finished
run, or a unit whose entry is gone, reads the files.

Entries are bounded (the oldest go first): a unit whose scoring never ran (it failed on our
side) cannot make the map grow.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

from voxeval.audio import Audio
from voxeval.audio.io import wav_file_audio
from voxeval.json_types import JSONObject

# An entry lives from a unit's stored reply to its scoring, so only units in flight have one;
# past this many (very high concurrency), the oldest are read from their files instead. A
# small bound keeps the audio held in memory small.
KEPT_MAX = 256


class FreshReplies:
    """What the interaction of each unit wrote, by unit folder, until its scoring takes it."""

    def __init__(self, kept_max: int = KEPT_MAX) -> None:
        self._kept: OrderedDict[Path, tuple[str, bytes | None]] = OrderedDict()
        self._lock = threading.Lock()
        self._kept_max = kept_max

    def keep(self, unit_dir: Path, reply_text: str, wav: bytes | None) -> None:
        """``reply_text``: reply.json as written; ``wav``: assistant.wav's bytes (None: the
        reply has no audio file)."""
        with self._lock:
            self._kept.pop(unit_dir, None)
            self._kept[unit_dir] = (reply_text, wav)
            while len(self._kept) > self._kept_max:
                self._kept.popitem(last=False)

    def forget(self, unit_dir: Path) -> None:
        with self._lock:
            self._kept.pop(unit_dir, None)

    def take(self, unit_dir: Path, wav_name: str) -> tuple[JSONObject, Audio | None] | None:
        """(parsed reply.json, the audio as ``read_audio`` reads it, or None) of the unit in
        ``unit_dir``, or None when nothing is kept for it; the entry goes."""
        with self._lock:
            kept = self._kept.pop(unit_dir, None)
        if kept is None:
            return None
        text, wav = kept
        audio = None if wav is None else wav_file_audio(wav, unit_dir / wav_name)
        reply = json.loads(text)
        if not isinstance(reply, dict):  # kept only after ReplyFile validated it
            raise TypeError(f"{unit_dir}: the kept reply is not a JSON object")
        return reply, audio
