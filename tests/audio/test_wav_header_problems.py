"""Broken query recordings are refused when the suite is loaded, before a run folder exists,
naming the item, the field and the file: a WAV cut short (libsndfile would read the part
that is there), a 4 GB placeholder length in the header, 0 channels, a rate of 0 Hz and
NaN / infinite samples."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.runner.executor_world import run_cli, single_turn_config
from voxeval.audio import read_audio
from voxeval.audio.wav_header import wav_header_problem
from voxeval.errors import AudioError

DATA_SIZE_AT = 40  # the data chunk's size field in the plain 44-byte header


def cut_short(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: 44 + 2000])  # the header promises 38400 bytes (1.2 s at 16 kHz)


def placeholder_length(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, DATA_SIZE_AT, 0xFFFFFFFF)
    path.write_bytes(bytes(data))


def zero_channels(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 22, 0)
    path.write_bytes(bytes(data))


def zero_rate(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 24, 0)
    path.write_bytes(bytes(data))


def not_finite(path: Path) -> None:
    samples = np.zeros(16000, dtype=np.float32)
    samples[100], samples[200] = np.nan, np.inf
    sf.write(path, samples, 16000, subtype="FLOAT")


BREAKAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "cut short": (cut_short, "truncated WAV: the header declares 38400 bytes"),
    "4 GB header": (placeholder_length, "the WAV header declares a data chunk of 4.0 GB"),
    "0 channels": (zero_channels, "the WAV header declares 0 channels"),
    "rate 0": (zero_rate, "the WAV header declares a sample rate of 0 Hz"),
    "NaN": (not_finite, "NaN or infinite samples"),
}


@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_a_broken_query_recording_stops_the_run_before_its_folder_exists(
    tmp_path: Path, case: str
) -> None:
    breakage, message = BREAKAGES[case]
    config = single_turn_config(tmp_path, "http://127.0.0.1:9/v1", metrics=["duration"])
    broken = tmp_path / "suite" / "q2.wav"
    breakage(broken)
    result = run_cli(config, tmp_path / "run")
    # without any whitespace: the console wraps long temp paths at its width, anywhere
    text = "".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "item#3(id='q2'):audio:" in text and "q2.wav" in text
    assert "".join(message.split()) in text
    assert "silent" not in text
    assert not (tmp_path / "run").exists()


def test_a_cut_short_wav_is_refused_by_read_audio_too(tmp_path: Path) -> None:
    path = tmp_path / "reply.wav"
    sf.write(path, np.zeros(16000, dtype=np.float32), 16000, subtype="PCM_16")
    cut_short(path)
    with pytest.raises(AudioError, match=r"reply\.wav: truncated WAV: .* only 2000 follow"):
        read_audio(path)


def test_sound_and_foreign_headers_pass() -> None:
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + 8, b"WAVE", b"fmt ", 16, 1, 1, 16000, 32000, 2, 16,
        b"data", 8,
    )  # fmt: skip
    assert wav_header_problem(header + bytes(8), len(header) + 8) is None
    assert wav_header_problem(b"ID3\x03" + bytes(40), 44) is None  # not a WAV: others decide
    assert "cut short" in (wav_header_problem(header[:20], 20) or "")
