"""Recordings from the browser: decode what MediaRecorder uploaded (WebM/Ogg Opus via PyAV;
WAV/FLAC/Ogg via soundfile when PyAV is absent), make it mono, resample it with soxr to the
study's rate and write ``recordings/<item>/<rater>.wav``."""

from __future__ import annotations

import hashlib
import io
import re
import secrets
from pathlib import Path

import numpy as np

from voxeval.audio import Audio
from voxeval.audio.io import audio_from_bytes, write_audio
from voxeval.audio.resample import resample
from voxeval.errors import AudioError
from voxeval.raters.study.study_files import RECORDINGS_DIR

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_RECORDING_S = 600.0
MIN_RECORDING_S = 0.2


def _decode_with_av(data: bytes) -> Audio | None:
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise AudioError("upload: no audio stream")
            stream = container.streams.audio[0]
            rate = int(stream.rate or stream.codec_context.sample_rate or 0)
            # Planar float, channels kept: the mean of the channels below is the mono mix
            # (FFmpeg's own downmix adds the channels at -3 dB, which changes the level).
            resampler = av.AudioResampler(format="fltp", rate=rate or None)
            chunks: list[np.ndarray] = []
            for frame in container.decode(stream):
                rate = rate or int(frame.sample_rate)
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().mean(axis=0))
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().mean(axis=0))
    except av.error.FFmpegError as exc:
        raise AudioError(f"upload: not a readable recording ({exc.strerror or exc})") from exc
    if not chunks or rate <= 0:
        raise AudioError("upload: the recording holds no audio")
    return Audio(np.concatenate(chunks).astype(np.float32), rate, "upload")


def decode_upload(data: bytes) -> Audio:
    """The uploaded recording as mono audio at its own rate."""
    if not data:
        raise AudioError("upload: the recording is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise AudioError(f"upload: larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB")
    audio = _decode_with_av(data)
    if audio is None:
        audio = audio_from_bytes(data, source="upload")
    if not np.all(np.isfinite(audio.samples)):
        raise AudioError("upload: the recording holds non-finite samples")
    if audio.duration < MIN_RECORDING_S:
        raise AudioError(f"upload: shorter than {MIN_RECORDING_S} s")
    if audio.duration > MAX_RECORDING_S:
        raise AudioError(f"upload: longer than {MAX_RECORDING_S:.0f} s")
    return audio


def _safe_name(name: str) -> str:
    """A file-system-safe stand-in for an id (with a hash when characters were replaced)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip("._") or "item"
    if cleaned != name:
        cleaned = f"{cleaned[:80]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return cleaned


def recording_path(item_id: str, rater_id: str) -> str:
    """Study-relative path of a rater's recording of an item."""
    return f"{RECORDINGS_DIR}/{_safe_name(item_id)}/{_safe_name(rater_id)}.wav"


def save_recording(
    study_dir: Path, item_id: str, rater_id: str, audio: Audio, rate: int
) -> tuple[str, Audio]:
    """Resample to ``rate`` and write the WAV (atomically); returns its relative path."""
    staged, at_rate = stage_recording(study_dir, item_id, rater_id, audio, rate)
    relative = recording_path(item_id, rater_id)
    staged.replace(study_dir / relative)
    return relative, at_rate


def stage_recording(
    study_dir: Path, item_id: str, rater_id: str, audio: Audio, rate: int
) -> tuple[Path, Audio]:
    """Resample to ``rate`` and write the WAV under a unique temporary name beside its final
    place; the caller moves it there once the answer is accepted (or deletes it), so a
    refused submission never replaces an accepted take."""
    at_rate = resample(audio, rate)
    final = study_dir / recording_path(item_id, rater_id)
    staged = final.with_name(f".{final.stem}.{secrets.token_hex(6)}.wav")
    write_audio(at_rate, staged)
    return staged, at_rate
