"""Recordings a dataset row embeds (bytes, sample arrays) or points to, as files on disk.

Embedded audio is written as ``<content hash>.<format>``, so a dataset rewritten with its rows
in another order pairs every row with the same file; the writer remembers what it created so a
failed import can remove it. ``RowError`` names the field of a row that could not be read.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from voxeval import atomic_files
from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.benchmarks.dataset_files import RowValue


class RowError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class EmbeddedAudioWriter:
    """Writes embedded recordings as ``<content hash>.wav``; remembers what it created so a
    failed import can remove it."""

    def __init__(self, audio_dir: Path) -> None:
        self.audio_dir = audio_dir
        self.created: list[Path] = []
        self.created_dir = not audio_dir.exists()

    def _write(self, name: str, encode: Callable[[], bytes]) -> str:
        target = self.audio_dir / name
        if not target.exists():
            data: bytes = encode()
            atomic_files.write_bytes_atomic(target, data)
            self.created.append(target)
        return str(target)

    def materialise(self, audio: RowValue, base: Path) -> str:
        if audio is None:
            raise RowError("audio", "missing")
        if isinstance(audio, str):
            path = Path(audio)
            return self._existing(path if path.is_absolute() else base / path)
        if not isinstance(audio, dict):
            raise RowError("audio", f"expected a path or a mapping, got {type(audio).__name__}")
        if audio.get("bytes"):
            data = _binary(audio["bytes"])
            digest = hashlib.sha256(data).hexdigest()[:24]
            # kept byte for byte (the release's own encoding), once checked to decode
            return self._write(f"{digest}.{audio_format(data)}", lambda: data)
        if audio.get("array") is not None:
            if not audio.get("sampling_rate"):
                raise RowError("audio", "'array' needs 'sampling_rate'")
            try:
                samples = np.asarray(audio["array"], dtype=np.float32)
                rate = _whole_number(audio["sampling_rate"])
            except (TypeError, ValueError) as exc:
                raise RowError("audio", f"unreadable array ({exc})") from exc
            digest = hashlib.sha256(samples.tobytes() + str(rate).encode()).hexdigest()[:24]
            return self._write(f"{digest}.wav", lambda: audio_to_wav_bytes(Audio(samples, rate)))
        if audio.get("path"):
            path = Path(str(audio["path"]))
            return self._existing(path if path.is_absolute() else base / path)
        raise RowError("audio", "mapping needs 'bytes', 'array' or 'path'")

    @staticmethod
    def _existing(path: Path) -> str:
        if not path.is_file():
            raise RowError("audio", f"file not found: {path}")
        return str(path)

    def discard(self) -> None:
        for path in self.created:
            path.unlink(missing_ok=True)
        if self.created_dir and self.audio_dir.is_dir() and not any(self.audio_dir.iterdir()):
            self.audio_dir.rmdir()


def _binary(value: RowValue) -> bytes:
    """Embedded bytes: binary data (parquet) or a list of byte values (JSON)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, list) and all(isinstance(b, int) for b in value):
        return bytes(b for b in value if isinstance(b, int))
    raise RowError("audio", f"'bytes' holds {type(value).__name__}, not binary data")


def _whole_number(value: RowValue) -> int:
    if not isinstance(value, int | float | str | bytes):
        raise TypeError(f"sampling_rate is {type(value).__name__}, not a number")
    return int(value)


def audio_format(data: bytes) -> str:
    """The file suffix of embedded audio (``wav``, ``flac``, ...); ``RowError`` when the bytes
    are not a recording soundfile can read."""
    try:
        info = sf.info(io.BytesIO(data))
    except Exception as exc:  # soundfile raises LibsndfileError / RuntimeError
        raise RowError("audio", f"cannot decode embedded bytes ({exc})") from exc
    if info.frames <= 0:
        raise RowError("audio", "embedded recording is empty")
    return str(info.format).lower()
