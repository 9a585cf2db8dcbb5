"""Files served from a run folder: only regular files inside it, of the kinds a browser
needs (audio, the static report, JSON artifacts). A path that climbs out (``..``), a symlink
pointing elsewhere or an unexpected kind of file is not served."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

SERVED_SUFFIXES = {
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".jsonl": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
}


def resolve_run_file(run_dir: Path, relative: str) -> Path | None:
    """The file ``relative`` names inside ``run_dir``, or None when it must not be served."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or any(p in ("..", "") or p.startswith("/") for p in parts):
        return None
    root = run_dir.resolve()
    candidate = root.joinpath(*parts)
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(root) or not resolved.is_file():
        return None
    # a symlink inside the run is refused too, even to another run file: runs hold real files
    if any(p.is_symlink() for p in _chain(root, candidate)):
        return None
    if resolved.suffix.lower() not in SERVED_SUFFIXES:
        return None
    return resolved


def media_type(path: Path) -> str:
    return SERVED_SUFFIXES.get(path.suffix.lower(), "application/octet-stream")


def _chain(root: Path, candidate: Path) -> list[Path]:
    chain = []
    current = candidate
    while current != root and current != current.parent:
        chain.append(current)
        current = current.parent
    return chain
