"""Reading and writing audio files (WAV/FLAC/OGG via soundfile; MP3 via soundfile or librosa)."""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import soundfile as sf

from voxeval.audio.pcm_wav import (
    decode_pcm16_wav,
    encode_pcm16_wav,
    is_encoded_as_we_would,
    pcm16_wav_header,
)
from voxeval.audio.value import MAX_SECONDS, Audio
from voxeval.audio.wav_header import wav_header_problem
from voxeval.errors import AudioError
from voxeval.plain_files import read_file_bytes

# How a multi-channel input becomes mono: the average of all channels, or one channel.
ChannelMode = Literal["mix", "left", "right"]
CHANNEL_MODES: tuple[str, ...] = get_args(ChannelMode)
DEFAULT_MAX_AUDIO_S = 600.0
DEFAULT_MAX_AUDIO_MB = 200.0
_MB = 1024 * 1024


@dataclass(frozen=True)
class AudioLimits:
    """The largest input file accepted (``max_audio_s`` / ``max_audio_mb`` in suites and
    replay systems). Both are checked from the file size and the header, before decoding."""

    max_seconds: float = DEFAULT_MAX_AUDIO_S
    max_megabytes: float = DEFAULT_MAX_AUDIO_MB

    def __post_init__(self) -> None:
        if not (self.max_seconds > 0 and self.max_megabytes > 0):
            raise ValueError("audio limits must be positive")


@dataclass(frozen=True)
class AudioFileInfo:
    """What the header of an audio file declares."""

    frames: int
    rate: int
    channels: int

    @property
    def seconds(self) -> float:
        return self.frames / self.rate if self.rate > 0 else 0.0


def _select_channels(data: np.ndarray, where: str, channels: ChannelMode | None) -> np.ndarray:
    if data.ndim == 1:
        return data
    if data.ndim == 2 and data.shape[1] == 1:
        return data[:, 0]
    if channels == "mix":
        return data.mean(axis=1)
    if channels == "left":
        return data[:, 0]
    if channels == "right":
        return data[:, 1]
    raise _multichannel_error(where, data.shape[1])


def _multichannel_error(where: str, count: int) -> AudioError:
    return AudioError(
        f"{where}: has {count} channels; voxeval works on mono "
        f"(set channels: {' | '.join(CHANNEL_MODES)} to choose how to make it mono)"
    )


def _check_size(p: Path, limits: AudioLimits | None) -> None:
    try:
        size = p.stat().st_size
    except (FileNotFoundError, NotADirectoryError):
        raise AudioError(f"{p}: file not found") from None
    _check_file_size(p, size, limits)


def _check_file_size(p: Path, size: int, limits: AudioLimits | None) -> None:
    if size == 0:
        raise AudioError(f"{p}: file is empty")
    if limits is not None and size > limits.max_megabytes * _MB:
        raise AudioError(
            f"{p}: file is {size / _MB:.1f} MB; the limit is {limits.max_megabytes:g} MB "
            "(max_audio_mb)"
        )


def _check_header(p: Path, info: AudioFileInfo, limits: AudioLimits | None) -> None:
    """Refuse long files from their header, before decoding them into memory."""
    if info.rate <= 0:
        return
    if limits is not None and info.seconds > limits.max_seconds:
        raise AudioError(
            f"{p}: audio is {info.seconds:.0f} s long; the limit is {limits.max_seconds:g} s "
            "(max_audio_s)"
        )
    if info.seconds > MAX_SECONDS:
        raise AudioError(f"{p}: audio is {info.seconds:.0f} s long; limit is {MAX_SECONDS:.0f} s")


def probe_audio(path: str | Path, limits: AudioLimits | None = None) -> AudioFileInfo:
    """Check a file's existence, size and header against ``limits`` without decoding it;
    returns what the header declares. Files soundfile cannot open (some MP3s) are only
    checked for size here, and for length once decoded."""
    p = Path(path)
    if not p.is_file():
        raise AudioError(f"{p}: file not found")
    _check_size(p, limits)
    if p.suffix.lower() == ".wav":
        plain = _probe_pcm16_wav(p)
        if plain is not None:
            _check_header(p, plain, limits)
            return plain
        _check_wav_header(p)
    try:
        header = sf.info(str(p))
    except Exception:  # undecodable here: read_audio reports it (or decodes MP3 otherwise)
        return AudioFileInfo(frames=0, rate=0, channels=0)
    info = AudioFileInfo(int(header.frames), int(header.samplerate), int(header.channels))
    _check_header(p, info, limits)
    if str(header.subtype) in _FLOAT_SUBTYPES:
        # Only float encodings can hold NaN or infinite samples: decode to check them now,
        # not when the run is already under way.
        read_audio(p, channels="mix", limits=limits)
    return info


_FLOAT_SUBTYPES = frozenset({"FLOAT", "DOUBLE"})


def _check_wav_header(p: Path) -> None:
    """Refuse a WAV file whose header does not match the file (cut short, 0 channels, rate
    0, a 4 GB placeholder length): libsndfile would read what is there without a word."""
    with open(p, "rb") as handle:
        head = handle.read(_WAV_HEAD_BYTES)
        size = os.fstat(handle.fileno()).st_size
    problem = wav_header_problem(head, size)
    if problem is not None:
        raise AudioError(f"{p}: {problem}")


# Bytes read to find a WAV file's format and data chunks (metadata chunks may come first).
_WAV_HEAD_BYTES = 64 * 1024


def _probe_pcm16_wav(p: Path) -> AudioFileInfo | None:
    """The header of a 16-bit PCM WAV file without libsndfile (a quarter of its cost per
    file, which a plan pays for every query); None for anything else."""
    with open(p, "rb") as handle:
        head = handle.read(_WAV_HEAD_BYTES)
        size = os.fstat(handle.fileno()).st_size
    layout = pcm16_wav_header(head, size)
    if layout is None:
        return None
    frames, rate, channels = layout
    return AudioFileInfo(frames, rate, channels)


def read_audio(
    path: str | Path,
    *,
    channels: ChannelMode | None = None,
    limits: AudioLimits | None = None,
) -> Audio:
    """Read an audio file into a mono ``Audio``; errors name the file and the problem.

    ``channels`` says how a multi-channel file becomes mono (``mix`` averages, ``left`` and
    ``right`` keep one); None refuses such files. ``limits`` caps size and duration, checked
    before any sample is decoded (without it only the 4-hour sanity limit applies).
    """
    p = Path(path)
    where = str(p)
    if p.suffix.lower() == ".wav":
        plain = _read_pcm16_wav(p, channels, limits)
        if plain is not None:
            return plain
        _check_wav_header(p)
    else:
        _check_size(p, limits)
    try:
        # One open: the header is checked before the samples are decoded into memory.
        with sf.SoundFile(str(p)) as handle:
            info = AudioFileInfo(handle.frames, handle.samplerate, handle.channels)
            _check_header(p, info, limits)
            if channels is None and info.channels > 1:
                raise _multichannel_error(where, info.channels)
            data = handle.read(dtype="float32", always_2d=False)
            rate = handle.samplerate
    except AudioError:
        raise
    except Exception as exc:  # soundfile raises several types for corrupt input
        if p.suffix.lower() == ".mp3":
            data, rate = _read_mp3_fallback(p, exc, channels)
        else:
            raise AudioError(f"{where}: cannot decode audio ({exc})") from exc
    data = _select_channels(np.asarray(data), where, channels)
    if data.size == 0:
        raise AudioError(f"{where}: contains no samples")
    if limits is not None and data.size / rate > limits.max_seconds:  # MP3 fallback only
        _check_header(p, AudioFileInfo(data.size, int(rate), 1), limits)
    return Audio(data, int(rate), source=where)


def _read_pcm16_wav(
    p: Path, channels: ChannelMode | None, limits: AudioLimits | None
) -> Audio | None:
    """``read_audio`` of a 16-bit PCM WAV file without libsndfile (see ``pcm_wav``); None
    for any other file. Its size is checked before it is read, so reading it whole is
    bounded."""
    try:
        data = read_file_bytes(p, check_size=lambda size: _check_file_size(p, size, limits))
    except (FileNotFoundError, NotADirectoryError):
        raise AudioError(f"{p}: file not found") from None
    return _pcm16_wav_audio(data, p, channels, limits)


def wav_file_audio(data: bytes, path: Path) -> Audio:
    """What ``read_audio(path)`` returns for a WAV file holding ``data``, without reading it:
    for bytes a run has just written there and still holds."""
    plain = _pcm16_wav_audio(data, path, None, None)
    return plain if plain is not None else audio_from_bytes(data, source=str(path))


def _pcm16_wav_audio(
    data: bytes, p: Path, channels: ChannelMode | None, limits: AudioLimits | None
) -> Audio | None:
    decoded = decode_pcm16_wav(data)
    if decoded is None:
        return None
    interleaved, rate, count = decoded
    where = str(p)
    _check_header(p, AudioFileInfo(interleaved.size // count, rate, count), limits)
    if channels is None and count > 1:
        raise _multichannel_error(where, count)
    samples = _select_channels(interleaved.reshape(-1, count), where, channels)
    if samples.size == 0:
        raise AudioError(f"{where}: contains no samples")
    return _keeping_bytes(Audio(samples, rate, source=where), data)


def _read_mp3_fallback(
    p: Path, first_error: Exception, channels: ChannelMode | None
) -> tuple[np.ndarray, int]:
    try:
        import librosa
    except ImportError as exc:
        raise AudioError(
            f"{p}: cannot decode MP3 ({first_error}); install librosa for MP3 support"
        ) from exc
    try:
        with warnings.catch_warnings():  # librosa warns about its audioread fallback
            warnings.simplefilter("ignore")
            data, rate = librosa.load(str(p), sr=None, mono=False)
    except Exception as exc:
        raise AudioError(f"{p}: cannot decode MP3 ({first_error}; librosa: {exc!r})") from exc
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 2:  # librosa puts channels first
        data = _select_channels(data.T, str(p), channels)
    return data, int(rate)


def write_audio(audio: Audio, path: str | Path, *, subtype: str | None = None) -> Path:
    """Write ``audio`` to ``path``; the format follows the suffix (.wav default 16-bit PCM)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fmt = p.suffix.lstrip(".").upper() or "WAV"
    if fmt == "WAV" and subtype is None:
        subtype = "PCM_16"
    tmp = p.with_name(p.name + ".part")
    if fmt == "WAV" and subtype == "PCM_16":
        tmp.write_bytes(audio_to_wav_bytes(audio))
    else:
        sf.write(
            str(tmp), np.clip(audio.samples, -1.0, 1.0), audio.rate, format=fmt, subtype=subtype
        )
    tmp.replace(p)  # atomic: a killed run never leaves a half-written file under the real name
    return p


# Encodings kept with their Audio up to this size (~4 min at 16 kHz): beyond it, holding
# the bytes beside the samples costs more memory than encoding again costs time.
KEEP_ENCODED_MAX_BYTES = 8 * 2**20


def _keeping_bytes(audio: Audio, data: bytes) -> Audio:
    """``audio`` decoded from ``data``; remembers ``data`` as its encoding when encoding
    the samples again would give back exactly these bytes."""
    if len(data) <= KEEP_ENCODED_MAX_BYTES and is_encoded_as_we_would(data, audio.rate):
        audio.keep_encoded_wav(data)
    return audio


def audio_to_wav_bytes(audio: Audio) -> bytes:
    """16-bit PCM WAV bytes (for HTTP uploads, artifacts and cache keys); encoded once per
    value, or the very bytes it was read from when they are already in this form."""
    if audio.encoded_wav is not None:
        return audio.encoded_wav
    data = encode_pcm16_wav(audio.samples, audio.rate)
    if len(data) <= KEEP_ENCODED_MAX_BYTES:
        audio.keep_encoded_wav(data)
    return data


def audio_from_bytes(data: bytes, *, source: str = "<bytes>") -> Audio:
    """Decode encoded audio bytes (WAV/FLAC/OGG/MP3) into mono ``Audio``."""
    if not data:
        raise AudioError(f"{source}: no audio bytes")
    plain = decode_pcm16_wav(data)  # the common case, without libsndfile's set-up cost
    if plain is not None:
        interleaved, rate, channels = plain
        samples = interleaved if channels == 1 else interleaved.reshape(-1, channels)
    else:
        try:
            samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
        except Exception as exc:
            raise AudioError(f"{source}: cannot decode audio bytes ({exc})") from exc
    samples = _select_channels(np.asarray(samples), source, "mix")
    if samples.size == 0:
        raise AudioError(f"{source}: contains no samples")
    audio = Audio(samples, int(rate), source=source)
    return audio if plain is None else _keeping_bytes(audio, data)
