"""Which files the app may send: only regular files inside the study's ``audio/`` and
``recordings/`` folders, after resolving symlinks, so ``..`` or a link pointing elsewhere
finds nothing (404)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from voxeval.raters.study.study_files import AUDIO_DIR, RECORDINGS_DIR

SERVED_DIRS = (AUDIO_DIR, RECORDINGS_DIR)
AUDIO_TYPES = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".opus": "audio/ogg",
    ".flac": "audio/flac",
    ".webm": "audio/webm",
    ".m4a": "audio/mp4",
}


def resolve_study_file(study_dir: Path, relative: str) -> Path | None:
    """The file ``relative`` names, or None when it is not a servable study file."""
    if not relative or "\\" in relative or "\x00" in relative or len(relative) > 1000:
        return None
    parts = PurePosixPath(relative).parts
    if len(parts) < 2 or parts[0] not in SERVED_DIRS or relative.startswith("/"):
        return None
    if any(part in ("..", ".") for part in parts):
        return None
    if PurePosixPath(relative).suffix.lower() not in AUDIO_TYPES:
        return None
    root = (study_dir / parts[0]).resolve()
    try:
        target = (study_dir / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(root) or not target.is_file():
        return None
    return target


def media_type(path: Path) -> str:
    return AUDIO_TYPES.get(path.suffix.lower(), "application/octet-stream")
