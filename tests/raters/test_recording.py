"""Uploaded recordings: decoded (WAV, Ogg/WebM Opus through PyAV), mono, resampled to the
study rate, written under recordings/; unusable uploads are refused with a reason."""

from __future__ import annotations

import io
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile as sf

from voxeval.errors import AudioError
from voxeval.raters.recording import decode_upload, recording_path, save_recording


def _tone(rate: int, seconds: float = 1.0, channels: int = 1) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    mono = (0.4 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    return np.stack([mono] * channels, axis=1) if channels > 1 else mono


def _opus_webm(seconds: float = 1.0) -> bytes:
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="webm") as container:
        stream = container.add_stream("libopus", rate=48000)
        samples = _tone(48000, seconds).reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(samples, format="flt", layout="mono")
        frame.sample_rate = 48000
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


def test_stereo_wav_becomes_mono_at_the_study_rate(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    sf.write(buffer, _tone(44100, 1.0, channels=2), 44100, format="WAV")
    audio = decode_upload(buffer.getvalue())
    assert audio.rate == 44100 and audio.samples.ndim == 1
    assert audio.duration == pytest.approx(1.0, abs=0.01)
    relative, _ = save_recording(tmp_path, "item/1", "rater-ab", audio, 16000)
    assert relative == recording_path("item/1", "rater-ab")
    assert relative.startswith("recordings/item_1-") and relative.endswith("/rater-ab.wav")
    data, rate = sf.read(str(tmp_path / relative))
    assert rate == 16000 and len(data) == pytest.approx(16000, abs=20)
    assert float(np.sqrt(np.mean(data**2))) == pytest.approx(
        0.4 / np.sqrt(2), rel=0.02
    )  # mean of equal channels


def test_opus_in_webm_from_a_browser_is_decoded() -> None:
    audio = decode_upload(_opus_webm(1.0))
    assert audio.rate == 48000
    assert audio.duration == pytest.approx(1.0, abs=0.05)
    assert float(np.max(np.abs(audio.samples))) > 0.2


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty"), (b"not audio at all" * 10, "not a readable"), (None, "shorter")],
)
def test_unusable_uploads_are_refused(data: bytes | None, reason: str) -> None:
    if data is None:
        buffer = io.BytesIO()
        sf.write(buffer, _tone(16000, 0.05), 16000, format="WAV")
        data = buffer.getvalue()
    with pytest.raises(AudioError, match=reason):
        decode_upload(data)
