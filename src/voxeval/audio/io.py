"""Reading and writing audio files (WAV/FLAC/OGG via soundfile; MP3 via soundfile or librosa)."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import soundfile as sf

from voxeval.audio.value import MAX_SECONDS, Audio
from voxeval.errors import AudioError


def _to_mono(data: np.ndarray, where: str, mix_channels: bool) -> np.ndarray:
    if data.ndim == 1:
        return data
    if data.ndim == 2 and data.shape[1] == 1:
        return data[:, 0]
    if mix_channels:
        return data.mean(axis=1)
    raise AudioError(
        f"{where}: has {data.shape[1]} channels; voxeval works on mono "
        "(pass mix_channels=True to average them)"
    )


def read_audio(path: str | Path, *, mix_channels: bool = False) -> Audio:
    """Read an audio file into a mono ``Audio``; errors name the file and the problem."""
    p = Path(path)
    where = str(p)
    if not p.exists():
        raise AudioError(f"{where}: file not found")
    if p.stat().st_size == 0:
        raise AudioError(f"{where}: file is empty")
    try:
        # One open: the header is checked before the samples are decoded into memory.
        with sf.SoundFile(str(p)) as handle:
            _check_declared_length(p, handle.frames, handle.samplerate)
            data = handle.read(dtype="float32", always_2d=False)
            rate = handle.samplerate
    except AudioError:
        raise
    except Exception as exc:  # soundfile raises several types for corrupt input
        if p.suffix.lower() == ".mp3":
            data, rate = _read_mp3_fallback(p, exc)
        else:
            raise AudioError(f"{where}: cannot decode audio ({exc})") from exc
    data = _to_mono(np.asarray(data), where, mix_channels)
    if data.size == 0:
        raise AudioError(f"{where}: contains no samples")
    return Audio(data, int(rate), source=where)


def _check_declared_length(p: Path, frames: int, rate: int) -> None:
    """Refuse absurdly long files from their header, before decoding them into memory."""
    if rate > 0 and frames / rate > MAX_SECONDS:
        raise AudioError(f"{p}: audio is {frames / rate:.0f} s long; limit is {MAX_SECONDS:.0f} s")


def _read_mp3_fallback(p: Path, first_error: Exception) -> tuple[np.ndarray, int]:
    try:
        import librosa
    except ImportError as exc:
        raise AudioError(
            f"{p}: cannot decode MP3 ({first_error}); install librosa for MP3 support"
        ) from exc
    try:
        with warnings.catch_warnings():  # librosa warns about its audioread fallback
            warnings.simplefilter("ignore")
            data, rate = librosa.load(str(p), sr=None, mono=True)
    except Exception as exc:
        raise AudioError(f"{p}: cannot decode MP3 ({first_error}; librosa: {exc!r})") from exc
    return np.asarray(data, dtype=np.float32), int(rate)


def write_audio(audio: Audio, path: str | Path, *, subtype: str | None = None) -> Path:
    """Write ``audio`` to ``path``; the format follows the suffix (.wav default 16-bit PCM)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fmt = p.suffix.lstrip(".").upper() or "WAV"
    if fmt == "WAV" and subtype is None:
        subtype = "PCM_16"
    clipped = np.clip(audio.samples, -1.0, 1.0)
    tmp = p.with_name(p.name + ".part")
    sf.write(str(tmp), clipped, audio.rate, format=fmt, subtype=subtype)
    tmp.replace(p)  # atomic: a killed run never leaves a half-written file under the real name
    return p


def audio_to_wav_bytes(audio: Audio) -> bytes:
    """16-bit PCM WAV bytes (for HTTP uploads and cache keys)."""
    buf = io.BytesIO()
    sf.write(buf, np.clip(audio.samples, -1.0, 1.0), audio.rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def audio_from_bytes(data: bytes, *, source: str = "<bytes>") -> Audio:
    """Decode encoded audio bytes (WAV/FLAC/OGG/MP3) into mono ``Audio``."""
    if not data:
        raise AudioError(f"{source}: no audio bytes")
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
    except Exception as exc:
        raise AudioError(f"{source}: cannot decode audio bytes ({exc})") from exc
    samples = _to_mono(np.asarray(samples), source, mix_channels=True)
    if samples.size == 0:
        raise AudioError(f"{source}: contains no samples")
    return Audio(samples, int(rate), source=source)
