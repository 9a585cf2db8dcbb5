from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.audio.helpers import sine
from voxeval.audio import (
    AudioLimits,
    audio_from_bytes,
    audio_to_wav_bytes,
    probe_audio,
    read_audio,
    write_audio,
)
from voxeval.errors import AudioError


@pytest.mark.parametrize("suffix", [".wav", ".flac"])
def test_write_read_roundtrip(tmp_path: Path, suffix: str) -> None:
    tone = sine(rate=22050)
    path = write_audio(tone, tmp_path / f"tone{suffix}")
    back = read_audio(path)
    assert back.rate == 22050
    assert back.num_samples == tone.num_samples
    assert np.max(np.abs(back.samples - tone.samples)) < 1e-3  # 16-bit quantisation
    assert back.source == str(path)


def test_mp3_roundtrip_and_corrupt_mp3(tmp_path: Path) -> None:
    if "MP3" not in sf.available_formats():
        pytest.skip(f"libsndfile {sf.__libsndfile_version__} has no MP3 support")
    tone = sine(rate=16000)
    back = read_audio(write_audio(tone, tmp_path / "tone.mp3"))
    assert back.rate == 16000
    assert abs(back.duration - 1.0) < 0.1  # encoder padding
    assert abs(float(np.sqrt(np.mean(back.samples**2))) - 0.5 / np.sqrt(2)) < 0.02
    bad = tmp_path / "bad.mp3"
    bad.write_bytes(b"ID3" + b"\x00" * 50)
    with pytest.raises(AudioError, match=r"bad\.mp3: cannot decode MP3"):
        read_audio(bad)


def test_wav_bytes_roundtrip() -> None:
    tone = sine()
    back = audio_from_bytes(audio_to_wav_bytes(tone), source="upload")
    assert back.rate == tone.rate
    assert np.max(np.abs(back.samples - tone.samples)) < 1e-3


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match=r"nope\.wav: file not found"):
        read_audio(tmp_path / "nope.wav")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.wav"
    path.write_bytes(b"")
    with pytest.raises(AudioError, match=r"empty\.wav: file is empty"):
        read_audio(path)


def test_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.wav"
    path.write_bytes(b"RIFF\x00\x00garbage" * 10)
    with pytest.raises(AudioError, match=r"corrupt\.wav: cannot decode"):
        read_audio(path)


def test_zero_sample_file(tmp_path: Path) -> None:
    path = tmp_path / "nothing.wav"
    sf.write(str(path), np.zeros(0, dtype=np.float32), 16000, subtype="PCM_16")
    with pytest.raises(AudioError, match=r"nothing\.wav: contains no samples"):
        read_audio(path)


def test_nan_samples_in_float_wav(tmp_path: Path) -> None:
    path = tmp_path / "nan.wav"
    data = np.zeros(1600, dtype=np.float32)
    data[100] = np.nan
    sf.write(str(path), data, 16000, subtype="FLOAT")
    with pytest.raises(AudioError, match=r"nan\.wav: audio contains NaN"):
        read_audio(path)


def test_multichannel_rejected_unless_mixed(tmp_path: Path) -> None:
    path = tmp_path / "stereo.wav"
    left = sine().samples
    sf.write(str(path), np.stack([left, np.zeros_like(left)], axis=1), 16000)
    with pytest.raises(AudioError, match=r"stereo\.wav: has 2 channels.*channels: mix"):
        read_audio(path)
    mixed = read_audio(path, channels="mix")
    assert np.max(np.abs(mixed.samples - left / 2)) < 1e-3


def test_corrupt_bytes_named() -> None:
    with pytest.raises(AudioError, match="reply-7: cannot decode"):
        audio_from_bytes(b"not audio at all", source="reply-7")
    with pytest.raises(AudioError, match="reply-8: no audio bytes"):
        audio_from_bytes(b"", source="reply-8")


def _stereo(path: Path) -> tuple[np.ndarray, np.ndarray]:
    left, right = sine(440.0).samples, sine(1000.0, amp=0.25).samples
    sf.write(str(path), np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    return left, right


@pytest.mark.parametrize("mode", ["mix", "left", "right"])
def test_channel_choice(tmp_path: Path, mode: str) -> None:
    left, right = _stereo(tmp_path / "stereo.wav")
    expected = {"mix": (left + right) / 2, "left": left, "right": right}[mode]
    got = read_audio(tmp_path / "stereo.wav", channels=mode)  # type: ignore[arg-type]
    assert np.allclose(got.samples, expected, atol=1e-6)
    mono = write_audio(sine(), tmp_path / "mono.wav")
    assert read_audio(mono, channels=mode).num_samples == 16000  # type: ignore[arg-type]


def test_limits_are_checked_from_the_header_before_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_audio(sine(seconds=2.0), tmp_path / "long.wav")
    assert probe_audio(path).seconds == pytest.approx(2.0)

    def no_decoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("samples were decoded")

    monkeypatch.setattr(sf.SoundFile, "read", no_decoding)
    short = AudioLimits(max_seconds=1.5)
    with pytest.raises(AudioError, match=r"long\.wav: audio is 2 s long; the limit is 1\.5 s"):
        read_audio(path, limits=short)
    with pytest.raises(AudioError, match=r"max_audio_s"):
        probe_audio(path, short)
    small = AudioLimits(max_megabytes=0.01)  # 10 KiB; the file is ~63 KiB
    with pytest.raises(AudioError, match=r"long\.wav: file is 0\.1 MB; the limit is 0\.01 MB"):
        read_audio(path, limits=small)
    with pytest.raises(AudioError, match="max_audio_mb"):
        probe_audio(path, small)


def test_default_limits_are_ten_minutes_and_200_mb() -> None:
    assert AudioLimits() == AudioLimits(max_seconds=600.0, max_megabytes=200.0)
    with pytest.raises(ValueError, match="positive"):
        AudioLimits(max_seconds=0)
